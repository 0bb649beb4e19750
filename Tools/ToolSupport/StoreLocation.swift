import Foundation
import Switchyard
#if PostgreSQL
import SwitchyardPostgreSQL
#endif

// MARK: - StoreLocation

/// How the command-line tools read a store argument: a `postgres://` URL names a PostgreSQL store, anything
/// else a file or directory. PostgreSQL stores need the tools built with the package's PostgreSQL trait.
public enum StoreLocation {
    /// True when this build reaches PostgreSQL stores (the `PostgreSQL` trait).
    public static let hasPostgreSQL: Bool = {
        #if PostgreSQL
        StoreCoordinator.registerPostgreSQL()
        return true
        #else
        return false
        #endif
    }()

    /// True when `argument` is a PostgreSQL URL.
    public static func isServerURL(_ argument: String) -> Bool {
        let scheme = argument.split(separator: ":", maxSplits: 1).first?.lowercased()
        return argument.contains("://") && (scheme == "postgres" || scheme == "postgresql")
    }

    /// The URL of a store argument; for a PostgreSQL URL, registers the PostgreSQL stores or explains how to
    /// build `tool` with them. The error names the store without its password.
    public static func url(_ argument: String, tool: String) throws -> URL {
        guard isServerURL(argument) else { return URL(fileURLWithPath: argument) }
        guard let url = URL(string: argument), url.host?.isEmpty == false else {
            throw StoreLocationError(message: "\(redacted(argument)) is not a URL (postgres://user@host:port/database?schema=…)")
        }
        guard hasPostgreSQL else {
            throw StoreLocationError(message:
                "\(redacted(argument)): this \(tool) was built without PostgreSQL; build it with "
                    + "`swift build -c release --traits PostgreSQL --product \(tool)`")
        }
        return url
    }

    /// Checks every `CONFIG=postgres://…` store argument the same way.
    public static func checkStoreArguments(_ arguments: [String], tool: String) throws {
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "=") else { continue }
            let value = String(argument[argument.index(after: equals)...])
            if isServerURL(value) { _ = try url(value, tool: tool) }
        }
    }

    /// A PostgreSQL URL as messages show it: without its password.
    public static func redacted(_ argument: String) -> String {
        guard let url = URL(string: argument) else { return "postgres://(unreadable URL)" }
        return StoreDescription.displayLocation(type: .postgreSQL, url: url, configuration: "")
    }
}

/// A store argument the tool cannot use, and why.
public struct StoreLocationError: Error, CustomStringConvertible, LocalizedError {
    public let message: String
    public var description: String { message }
    public var errorDescription: String? { message }
}
