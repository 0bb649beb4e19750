import ArgumentParser
import Foundation
import Switchyard

// MARK: - codegen

/// `storeinspect codegen MODEL [--output FILE] [--public] [--prefix P] [--every-entity] [--config FILE]`: Swift
/// `EntityObject` types for the entities of a model as their Codegen setting asks (what the `SwitchyardCodegen`
/// build plugin runs, with the target's `switchyard-codegen.json` as `--config` when it has one).
struct CodegenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codegen",
        abstract: "Write Swift EntityObject types for the entities of a model, as Xcode's codegen does.")

    @Argument(help: "A .xcdatamodeld or .xcdatamodel.")
    var model: String

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    @Flag(name: .customLong("public"), help: "Declare the types and their members public.")
    var isPublic = false

    @Option(help: "Prefix every type name (for entities named like Foundation types).")
    var prefix = ""

    @Flag(help: "Generate every entity's whole type, whatever its Codegen setting (Manual/None entities are skipped otherwise, as Xcode skips them).")
    var everyEntity = false

    @Option(help: ArgumentHelp(
        "Read settings from a JSON file with any of the keys access (\"public\" or \"internal\"), everyEntity (true or false) and prefix; a key present there wins over the flag.",
        valueName: "file"))
    var config: String?

    func validate() throws {
        if let problem = CodegenConfiguration.prefixProblem(prefix) {
            throw ValidationError("--prefix \(problem)")
        }
    }

    func run() throws {
        var settings = CodegenConfiguration(access: isPublic ? "public" : "internal", everyEntity: everyEntity, prefix: prefix)
        if let config {
            do {
                let file = try CodegenConfiguration.load(from: URL(fileURLWithPath: config))
                settings.access = file.access ?? settings.access
                settings.everyEntity = file.everyEntity ?? settings.everyEntity
                settings.prefix = file.prefix ?? settings.prefix
            } catch {
                throw StoreInspectCommand.fail("codegen", "\(config): \(error)")
            }
        }
        let loaded = try StoreInspectCommand.loadModel(model, step: "codegen")
        let options = EntityCodeGenerator.Options(
            accessLevel: settings.access ?? "internal", typePrefix: settings.prefix ?? "",
            source: URL(fileURLWithPath: model).lastPathComponent, everyEntity: settings.everyEntity ?? false)
        let source = EntityCodeGenerator.swiftSource(for: loaded, options: options)
        let skipped = EntityCodeGenerator.skippedEntities(of: loaded, options: options)
        if !skipped.isEmpty {
            FileHandle.standardError.write(Data((
                "storeinspect: codegen: \(model): not generating \(skipped.joined(separator: ", ")) (Codegen Manual/None in the model; "
                    + "declare \(skipped.count == 1 ? "it" : "them") yourself, or pass --every-entity; "
                    + "under the build plugin, put {\"everyEntity\": true} in the target's \(CodegenConfiguration.fileName))\n").utf8))
        }
        guard let output else {
            StoreInspectCommand.write(source)
            return
        }
        do {
            let url = URL(fileURLWithPath: output)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Only rewrite a changed file, so a build plugin does not trigger needless recompiles.
            if (try? String(contentsOf: url, encoding: .utf8)) == source { return }
            try Data(source.utf8).write(to: url, options: .atomic)
        } catch {
            throw StoreInspectCommand.fail("codegen", "\(output): \(error.localizedDescription)")
        }
    }
}
