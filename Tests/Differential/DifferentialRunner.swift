import Foundation
import Switchyard
import SwitchyardPostgreSQL

/// Runs sequences against every backend and the reference, and reports the first divergence with the
/// shortest sequence that still shows it.
public struct DifferentialRunner {
    public enum Backend: String, CaseIterable, Sendable {
        case sqlite, lmdb, memory, postgresql

        /// The embedded backends.
        public static var allCases: [Backend] { [.sqlite, .lmdb, .memory] }
    }

    /// A divergence: where it happened and what each side said.
    public struct Divergence: Error, CustomStringConvertible {
        public var seed: UInt64
        public var steps: [DifferentialOp]
        public var message: String

        public var description: String {
            "differential divergence (seed \(seed)): \(message)\nshortest sequence (\(steps.count) steps):\n"
                + steps.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n")
        }
    }

    /// What one sequence did: steps run, fetches compared (of them, reads walked with `forEach`).
    public struct Summary: Sendable {
        public var steps = 0
        public var fetches = 0
        public var walks = 0
        public var saves = 0
    }

    let model: ObjectModel
    let directory: URL
    public var backends: [Backend]

    /// The server the PostgreSQL side uses (each run gets a schema of its own, dropped after it).
    public var postgresURL: URL?

    /// A runner over `backends`; `postgresURL` (a server, as `SWITCHYARD_POSTGRES_URL` gives it) adds the
    /// PostgreSQL side.
    public init(directory: URL, backends: [Backend] = Backend.allCases, postgresURL: URL? = nil) throws {
        self.model = try DifferentialModel.make()
        self.directory = directory
        self.postgresURL = postgresURL
        self.backends = backends + (postgresURL == nil ? [] : [.postgresql])
    }

    /// Generates the sequence for `seed` and runs it; on a divergence, shrinks it and throws.
    @discardableResult
    public func run(seed: UInt64, length: Int) throws -> Summary {
        var generator = DifferentialGenerator(seed: seed)
        let steps = generator.sequence(length: length)
        switch try execute(steps, tag: "s\(seed)") {
        case .success(let summary):
            return summary
        case .failure(let first):
            let shortest = try shrink(steps, seed: seed)
            throw Divergence(seed: seed, steps: shortest.steps, message: shortest.message.isEmpty ? first.message : shortest.message)
        }
    }

    struct Failure: Error { var index: Int; var message: String }

    /// Removes chunks of steps while the divergence remains (delta debugging, halving the chunk size).
    func shrink(_ steps: [DifferentialOp], seed: UInt64) throws -> (steps: [DifferentialOp], message: String) {
        var current = steps
        var message = ""
        if case .failure(let f) = try execute(current, tag: "k") {
            current = Array(current[...f.index])
            message = f.message
        }
        var chunk = max(1, current.count / 2)
        var attempt = 0
        while chunk >= 1 {
            var i = 0
            var removedAny = false
            while i < current.count {
                var candidate = current
                candidate.removeSubrange(i..<min(i + chunk, current.count))
                attempt += 1
                if !candidate.isEmpty, case .failure(let f) = try execute(candidate, tag: "k\(attempt)") {
                    current = Array(candidate[...f.index])
                    message = f.message
                    removedAny = true
                } else {
                    i += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return (current, message)
    }

    /// Runs `steps` on fresh stores; the first disagreement is a failure at that step.
    func execute(_ steps: [DifferentialOp], tag: String) throws -> Result<Summary, Failure> {
        let root = directory.appendingPathComponent("run-\(tag)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        var sides: [DifferentialSide] = []
        defer {
            // A PostgreSQL side's schema goes with the run, as the other sides' files do.
            for side in sides { for store in side.coordinator.stores where store.type == .postgreSQL { try? store.destroy() } }
        }
        for backend in backends {
            let coordinator = StoreCoordinator(model: model)
            // Every side records persistent history: at the end, each must have recorded the same transactions.
            let options = StoreOptions(persistentHistory: true)
            switch backend {
            case .sqlite: try coordinator.addStore(.sqlite, configuration: "Main", at: root.appendingPathComponent("d.sqlite"), options: options)
            case .lmdb: try coordinator.addStore(.lmdb, configuration: "Main", at: root.appendingPathComponent("d.lmdb"), options: options)
            case .memory: try coordinator.addStore(.memory, configuration: "Main", options: options)
            case .postgresql:
                guard let base = postgresURL, var parts = URLComponents(url: base, resolvingAgainstBaseURL: false) else { continue }
                parts.queryItems = (parts.queryItems ?? []).filter { $0.name != "schema" }
                    + [URLQueryItem(name: "schema", value: "d_\(tag.prefix(16))_\(UUID().uuidString.prefix(8))".lowercased())]
                try coordinator.addStore(.postgreSQL, configuration: "Main", url: parts.url!, options: options)
            }
            sides.append(DifferentialSide(name: backend.rawValue, coordinator: coordinator))
        }
        var reference = DifferentialReference()
        var summary = Summary()
        for (index, step) in steps.enumerated() {
            do {
                try apply(step, to: &sides, reference: &reference, summary: &summary)
            } catch let error as Failure {
                return .failure(Failure(index: index, message: "step \(index + 1) (\(step)): \(error.message)"))
            } catch {
                return .failure(Failure(index: index, message: "step \(index + 1) (\(step)): unexpected error \(error)"))
            }
            summary.steps += 1
        }
        if let mismatch = try historyMismatch(sides), !steps.isEmpty {
            return .failure(Failure(index: steps.count - 1, message: "after step \(steps.count): persistent history differs: \(mismatch)"))
        }
        return .success(summary)
    }

    /// Each side's history as (kind, entity, primary key, updated keys) per transaction; the first side whose
    /// history differs from the first side's, described; nil when all agree.
    func historyMismatch(_ sides: [DifferentialSide]) throws -> String? {
        func recorded(_ side: DifferentialSide) throws -> [[String]] {
            try side.coordinator.history(after: nil, in: "Main").map { transaction in
                transaction.changes.map { "\($0.kind) \($0.objectID.entityName)/\($0.objectID.primaryKey ?? -1) \($0.updatedKeys.sorted())" }
            }
        }
        guard let first = sides.first else { return nil }
        let expected = try recorded(first)
        for side in sides.dropFirst() {
            let actual = try recorded(side)
            guard actual != expected else { continue }
            let index = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(actual.count, expected.count)
            return "\(side.name) has \(actual.count) transactions, \(first.name) \(expected.count); transaction \(index + 1): "
                + "\(side.name) \(index < actual.count ? actual[index] : []) vs \(first.name) \(index < expected.count ? expected[index] : [])"
        }
        return nil
    }
}
