import Foundation

// MARK: - LoopbackHost

/// Whether a server host names this machine: the tests create and drop schemas, so they only ever use a
/// PostgreSQL server on a loopback address. One check for both test targets (`Tools/postgres.sh` has the
/// shell's).
public enum LoopbackHost {
    /// True for `localhost`, `::1` (bracketed or not) and an IPv4 address in 127.0.0.0/8 — four numbers, not
    /// a host name that merely starts with "127.".
    public static func contains(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber) && Int(part)! <= 255
        }
    }
}
