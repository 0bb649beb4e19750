import Foundation

/// The inputs that once crashed or hung the library (`Tests/SwitchyardTests/Reproducers/`, copied from the
/// reliability campaign's findings), found relative to this file: the test target declares no resources.
enum Reproducers {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Reproducers")

    static func url(_ name: String) -> URL { root.appendingPathComponent(name) }

    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }
}
