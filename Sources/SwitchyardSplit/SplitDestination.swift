import Foundation
import SwitchyardStores

// MARK: - SplitDestination

/// One output of a split: the store that receives a configuration of the target model.
public struct SplitDestination: Sendable, Hashable, Codable {
    /// The target model configuration this store receives.
    public var configuration: String
    /// The SQLite file or LMDB directory to create, or the PostgreSQL store's `postgres://` URL.
    public var url: URL
    /// The backend: `.sqlite`, `.lmdb` or `.postgreSQL` (which needs `StoreCoordinator.registerPostgreSQL()` from
    /// the SwitchyardPostgreSQL product).
    public var type: StoreType

    /// An output for `configuration` at `url`.
    public init(configuration: String, url: URL, type: StoreType) {
        self.configuration = configuration
        self.url = url
        self.type = type
    }

    /// Parses `CONFIG=PATH[:sqlite|lmdb]` or `CONFIG=postgres://…`; without a suffix the type follows the
    /// path's extension.
    public init(argument: String) throws {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw SplitError.usage("--store \(Self.redacted(argument)): expected CONFIG=PATH[:sqlite|lmdb] or CONFIG=postgres://…")
        }
        let configuration = String(argument[..<equals])
        var path = String(argument[argument.index(after: equals)...])
        if let scheme = path.split(separator: ":", maxSplits: 1).first?.lowercased(), scheme == "postgres" || scheme == "postgresql" {
            guard let url = URL(string: path), url.host?.isEmpty == false else {
                throw SplitError.usage("--store \(Self.redacted(argument)): not a URL (postgres://user@host:port/database?schema=…)")
            }
            self.init(configuration: configuration, url: url, type: .postgreSQL)
            return
        }
        var type: StoreType?
        for (suffix, t) in [(":sqlite", StoreType.sqlite), (":lmdb", StoreType.lmdb)] where path.lowercased().hasSuffix(suffix) {
            path = String(path.dropLast(suffix.count))
            type = t
        }
        guard !path.isEmpty else { throw SplitError.usage("--store \(argument): the path is empty") }
        let url = URL(fileURLWithPath: path)
        guard let resolved = type ?? StoreType(pathExtension: url.pathExtension), resolved != .memory else {
            throw SplitError.usage(
                "--store \(argument): cannot tell the store type from '\(url.lastPathComponent)'; "
                    + "use a .sqlite or .lmdb path or add :sqlite or :lmdb")
        }
        self.init(configuration: configuration, url: url, type: resolved)
    }

    /// The name the output is written under until it is complete and verified: a sibling file or directory, or
    /// for PostgreSQL a sibling schema (`<schema>_storesplit_partial`, its tables moved into the final schema in
    /// one transaction).
    package var temporaryURL: URL {
        if type == .postgreSQL { return ServerStoreLocations.sibling(of: url, type: type, suffix: "_storesplit_partial") }
        return url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".storesplit-partial")
    }

    /// The output as messages and reports show it: its path, or its URL without a password.
    public var displayPath: String { Self.displayPath(url, type: type) }

    /// A store location as messages show it: a file's path, a server's URL without its password.
    package static func displayPath(_ url: URL, type: StoreType) -> String {
        StoreDescription.displayLocation(type: type, url: url, configuration: "")
    }

    /// A `--store` argument with any password in it replaced.
    private static func redacted(_ argument: String) -> String {
        guard let equals = argument.firstIndex(of: "="), let url = URL(string: String(argument[argument.index(after: equals)...])),
            let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else { return argument }
        return String(argument[...equals]) + StoreDescription.displayLocation(type: .postgreSQL, url: url, configuration: "")
    }
}
