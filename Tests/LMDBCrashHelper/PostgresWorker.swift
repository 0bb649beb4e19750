import Foundation
import SwitchyardDifferential

/// `pg-worker URL ID COUNT WORKERS`: one of several processes writing and reading one PostgreSQL store
/// (`PostgresLoad.worker`). `pg-conflict URL LABEL`: one of two processes changing the same object
/// (`PostgresLoad.conflictWorker`).
func runPostgresWorkerModeIfAsked() {
    let arguments = CommandLine.arguments
    guard arguments.count >= 2 else { return }
    switch arguments[1] {
    case "pg-worker":
        guard arguments.count == 6, let url = URL(string: arguments[2]), let id = Int(arguments[3]), let count = Int(arguments[4]),
            let workers = Int(arguments[5])
        else {
            FileHandle.standardError.write(Data("usage: lmdb-crash-helper pg-worker URL ID COUNT WORKERS\n".utf8))
            exit(64)
        }
        PostgresLoad.worker(url: url, id: id, count: count, workers: workers)
        exit(0)
    case "pg-conflict":
        guard arguments.count == 4, let url = URL(string: arguments[2]) else {
            FileHandle.standardError.write(Data("usage: lmdb-crash-helper pg-conflict URL LABEL\n".utf8))
            exit(64)
        }
        PostgresLoad.conflictWorker(url: url, label: arguments[3])
        exit(0)
    default:
        return
    }
}
