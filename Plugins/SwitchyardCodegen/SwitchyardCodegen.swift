import Foundation
import PackagePlugin

/// Generates Swift `EntityObject` types for every `.xcdatamodeld` (or lone `.xcdatamodel`) among a target's
/// files, with `storeinspect codegen --public`, before the target compiles — Xcode's codegen for SwiftPM on any
/// platform (public, so a models library can export them). As in Xcode, each entity's Codegen setting decides
/// what is generated (Manual/None entities are left for you to declare).
/// Declare the model as a resource (`resources: [.copy("Model.xcdatamodeld")]`) so the target sees it.
///
/// A build plugin takes no arguments, so a target that wants other settings keeps them in
/// `switchyard-codegen.json` beside its sources (`{"access": "internal", "everyEntity": true, "prefix": "SY"}`,
/// every key optional), passed to `storeinspect codegen --config`, which checks it and says what is wrong.
@main
struct SwitchyardCodegen: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "storeinspect")
        var models: [URL: [URL]] = [:]
        for file in target.sourceFiles {
            // Every file inside a model bundle is an input; the bundle (or lone .xcdatamodel) is the model.
            var url = file.url
            var model: URL?
            while url.pathComponents.count > 1 {
                if url.pathExtension == "xcdatamodeld" { model = url; break }
                if url.pathExtension == "xcdatamodel", model == nil { model = url }
                url = url.deletingLastPathComponent()
            }
            if let model { models[model, default: []].append(file.url) }
        }
        // A `.copy` resource is listed as its bundle alone: its files (each version's `contents`) are inputs too,
        // so editing the model regenerates the types.
        for model in models.keys {
            let files = FileManager.default.enumerator(at: model, includingPropertiesForKeys: [.isRegularFileKey])
            while let file = files?.nextObject() as? URL {
                if (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { models[model]!.append(file) }
            }
        }
        let config = target.directoryURL.appendingPathComponent("switchyard-codegen.json")
        let hasConfig = FileManager.default.fileExists(atPath: config.path)
        return models.keys.sorted { $0.path < $1.path }.map { model in
            let output = context.pluginWorkDirectoryURL.appendingPathComponent(model.deletingPathExtension().lastPathComponent + "+Entities.swift")
            return .buildCommand(
                displayName: "Switchyard codegen \(model.lastPathComponent)",
                executable: tool.url,
                arguments: ["codegen", model.path, "--output", output.path, "--public"] + (hasConfig ? ["--config", config.path] : []),
                inputFiles: models[model]! + (hasConfig ? [config] : []),
                outputFiles: [output])
        }
    }
}
