import Foundation
import Switchyard

// lmdb-crash-helper create sqlite|lmdb STORE
//
// The child process of StoreCreationCrashTests: creates a store with `CreationCrashModel.model` (sixty
// entities, enough DDL for creation to take a while) and prints "created". The test kills it at random moments.

/// The model of the creation crash test (the test declares the same).
enum CreationCrashModel {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: (1...60).map { n in
            EntityDescription(name: "Entity\(n)", attributes: (1...6).map { a in
                AttributeDescription(name: "value\(a)", type: a % 2 == 0 ? .string : .integer64, isIndexed: a <= 2)
            })
        })
    }
}

/// Runs the `create` mode when the arguments ask for it; returns otherwise.
func runCreationCrashModeIfAsked() {
    let arguments = CommandLine.arguments
    guard arguments.count == 4, arguments[1] == "create" else { return }
    do {
        let url = URL(fileURLWithPath: arguments[3])
        let model = try CreationCrashModel.model()
        if arguments[2] == "sqlite" {
            _ = try SQLiteStore(url: url, model: model, configuration: "Default")
        } else {
            _ = try LMDBStore(url: url, model: model, configuration: "Default")
        }
        FileHandle.standardOutput.write(Data("created\n".utf8))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("lmdb-crash-helper: \(error)\n".utf8))
        exit(1)
    }
}
