import Foundation
import Testing
@testable import Switchyard

/// The third-party Core Data material in `../shared/fixtures/coredata/` (never copied into the repository).
/// Tests that use it are `.enabled(if: Fixtures.available, ...)` so they show as skipped, with the reason,
/// where the folder is absent.
enum Fixtures {
    /// `SWITCHYARD_FIXTURES` overrides; otherwise `<repo>/../shared/fixtures/coredata`.
    static let root: URL = {
        if let env = ProcessInfo.processInfo.environment["SWITCHYARD_FIXTURES"] {
            return URL(fileURLWithPath: env)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/fixtures/coredata")
    }()

    static let available: Bool = FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path)

    static let skipMessage: Comment = "../shared/fixtures/coredata is absent: real Core Data fixtures not tested"

    /// A path under the fixtures folder.
    static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}

/// The repository root, for `Schemas/` and built binaries.
enum Repository {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}

/// A fresh temporary directory, removed when the value is deinitialized.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    /// Whether a PostgreSQL store was made for this directory (its schemas are dropped with it).
    let usedServer = Locked(false)
    /// The URL of the PostgreSQL store called `name` that belongs to this directory.
    func postgresURL(_ name: String) throws -> URL {
        usedServer.withLock { $0 = true }
        return try TestServer.url(owner: url.lastPathComponent.replacingOccurrences(of: "switchyard-test-", with: "").replacingOccurrences(of: "-", with: ""), name: name)
    }
    deinit {
        try? FileManager.default.removeItem(at: url)
        if usedServer.withLock({ $0 }) {
            TestServer.dropSchemas(owner: url.lastPathComponent.replacingOccurrences(of: "switchyard-test-", with: "").replacingOccurrences(of: "-", with: ""))
        }
    }
}
