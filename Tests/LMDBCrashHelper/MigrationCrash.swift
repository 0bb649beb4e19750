import Foundation
import Switchyard
import SwitchyardPostgreSQL

// lmdb-crash-helper migrate sqlite|lmdb|postgresql STORE
//
// The child process of MigrationCrashTests: opens STORE (written with `MigrationCrashModel.version(1)`)
// with version 2, which migrates it a batch at a time; after each batch it prints "batch N" and sleeps, so
// the test can SIGKILL it in the middle of the migration. "finished" is printed only if the open returns.

/// The models of the migration crash test (the test declares the same two).
enum MigrationCrashModel {
    static func version(_ n: Int) throws -> ObjectModel {
        let note = n == 1
            ? AttributeDescription(name: "note", type: .string)
            : AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: .string("-"))
        return try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64), note]),
        ])
    }
}

/// Runs the `migrate` mode when the arguments ask for it; returns otherwise.
func runMigrationCrashModeIfAsked() {
    let arguments = CommandLine.arguments
    guard arguments.count == 4, arguments[1] == "migrate" else { return }
    do {
        let url = arguments[2] == "postgresql" ? URL(string: arguments[3])! : URL(fileURLWithPath: arguments[3])
        let model = try MigrationCrashModel.version(2)
        let progress: MigrationProgressHandler = { step in
            FileHandle.standardOutput.write(Data("batch \(step.done)\n".utf8))
            Thread.sleep(forTimeInterval: 0.05)
        }
        if arguments[2] == "sqlite" {
            _ = try SQLiteStore(url: url, model: model, configuration: "Default", migrationProgress: progress)
        } else if arguments[2] == "postgresql" {
            _ = try PostgreSQLStore(url: url, model: model, configuration: "Default", migrationProgress: progress)
        } else {
            _ = try LMDBStore(url: url, model: model, configuration: "Default", migrationProgress: progress)
        }
        FileHandle.standardOutput.write(Data("finished\n".utf8))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("lmdb-crash-helper: \(error)\n".utf8))
        exit(1)
    }
}
