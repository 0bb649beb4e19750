import Foundation
import SwitchyardStores

// MARK: - SplitDestination

/// One output of a split: the store that receives a configuration of the target model.
public struct SplitDestination: Sendable, Hashable, Codable {
    /// The target model configuration this store receives.
    public var configuration: String
    /// The SQLite file or LMDB directory to create.
    public var url: URL
    /// The backend: `.sqlite` or `.lmdb`.
    public var type: StoreType

    /// An output for `configuration` at `url`.
    public init(configuration: String, url: URL, type: StoreType) {
        self.configuration = configuration
        self.url = url
        self.type = type
    }

    /// Parses `CONFIG=PATH[:sqlite|lmdb]`; without a suffix the type follows the path's extension.
    public init(argument: String) throws {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw SplitError.usage("--store \(argument): expected CONFIG=PATH[:sqlite|lmdb]")
        }
        let configuration = String(argument[..<equals])
        var path = String(argument[argument.index(after: equals)...])
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

    /// The name the output is written under until it is complete and verified.
    package var temporaryURL: URL {
        url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".storesplit-partial")
    }
}
