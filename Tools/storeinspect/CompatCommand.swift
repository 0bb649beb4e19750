import ArgumentParser
import Foundation
import Switchyard

/// `storeinspect compat STORE --model MODEL`: whether the store opens with the model, and if not, why.
///
/// Exit codes: 0 identical or compatible (opens as is), 1 migratable (opens after an in-place migration),
/// 3 incompatible (would be refused, or recreated if disposable), 2 error.
struct CompatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compat",
        abstract: "Compare a store with a model: per entity unchanged, added, removed, renamed or changed, and whether each change can be migrated.",
        discussion: """
            Exit status: 0 identical or compatible, 1 migratable in place, 3 incompatible, 2 error.
            The store is only read.
            """)

    @Argument(help: "The store: a .sqlite file or an .lmdb directory.")
    var store: String

    @Option(help: "The model to open the store with (.xcdatamodeld or .xcdatamodel).")
    var model: String

    @Option(help: "The configuration the store holds.")
    var configuration: String = "Default"

    @Option(help: "The store type (sqlite or lmdb); by default from the path's extension.")
    var type: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() throws {
        try StoreInspectCommand.probe(store, step: "compat")
        let result: StoreCompatibility
        do {
            let url = URL(fileURLWithPath: store)
            let storeType = try resolveType(url)
            let loaded = try ModelLoader.load(at: URL(fileURLWithPath: model))
            guard loaded.configurationNames.contains(configuration) else {
                // Name the model file: the configuration is looked up in it, not in the store.
                throw ValidationError("\(model): unknown configuration '\(configuration)'; the model has: "
                    + loaded.configurationNames.joined(separator: ", "))
            }
            result = try StoreCompatibility.check(storeType, at: url, model: loaded, configuration: configuration)
        } catch let error as ExitCode {
            throw error
        } catch {
            FileHandle.standardError.write(Data("storeinspect: compat failed: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            var object = try JSONSerialization.jsonObject(with: try encoder.encode(result)) as? [String: Any] ?? [:]
            object["verdict"] = result.report.verdict.rawValue
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("\(result.path) (\(result.type.rawValue)), decided by \(result.basis.rawValue)")
            print(result.report.summary)
        }
        switch result.report.verdict {
        case .identical, .compatible: return
        case .migratable: throw ExitCode(1)
        case .incompatible: throw ExitCode(3)
        }
    }

    private func resolveType(_ url: URL) throws -> StoreType {
        if let type {
            guard let parsed = StoreType.allCases.first(where: { $0.rawValue.lowercased() == type.lowercased() }) else {
                throw ValidationError("--type must be sqlite or lmdb, not '\(type)'")
            }
            return parsed
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue { return .lmdb }
        return StoreType(pathExtension: url.pathExtension) ?? .sqlite
    }
}
