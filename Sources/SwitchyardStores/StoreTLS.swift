import Foundation

// MARK: - StoreTLS

/// How a server store's connections are encrypted (`StoreOptions.tls`), libpq's `sslmode` in a type.
///
/// ```swift
/// var options = StoreOptions(connectionPoolSize: 8)
/// options.tls = .require(trusting: URL(fileURLWithPath: "/etc/switchyard/db-ca.pem"))
/// try coordinator.addStore(.postgreSQL, configuration: "Cloud",
///                          url: URL(string: "postgres://app@db.internal/switchyard?schema=cloud")!, options: options)
/// ```
public struct StoreTLS: Sendable, Hashable {
    /// Whether the connection is encrypted.
    public enum Mode: String, Sendable, Hashable {
        /// Never: plain TCP (libpq's `disable`).
        case disable
        /// Encrypted when the server offers it, plain otherwise, and, as libpq's `prefer` (its default), without
        /// verifying the server's certificate: protection from passive listeners only.
        case prefer
        /// Always, with the server's certificate and host name verified (libpq's `verify-full`); a server without
        /// TLS, or with a certificate the trusted roots do not sign, is refused.
        case require
    }

    /// Whether the connection is encrypted.
    public var mode: Mode
    /// A PEM file of the certificates trusted to sign the server's (libpq's `sslrootcert`) under `Mode.require`;
    /// nil trusts the system's roots. The other modes verify nothing, so they do not read it.
    public var rootCertificates: URL?

    /// A mode and, optionally, the certificates to trust instead of the system's.
    public init(mode: Mode, rootCertificates: URL? = nil) {
        self.mode = mode
        self.rootCertificates = rootCertificates
    }

    /// Plain TCP.
    public static let disable = StoreTLS(mode: .disable)
    /// TLS when the server offers it, unverified (libpq's default).
    public static let prefer = StoreTLS(mode: .prefer)
    /// TLS always, the server's certificate verified against the system's roots, or against the PEM file at
    /// `rootCertificates`.
    public static func require(trusting rootCertificates: URL? = nil) -> StoreTLS {
        StoreTLS(mode: .require, rootCertificates: rootCertificates)
    }
}
