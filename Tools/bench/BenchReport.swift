import Foundation
import Switchyard

/// One measured operation: Switchyard's time next to the baselines', and the ratios.
struct BenchResult: Codable {
    var backend: String
    var operation: String
    /// Baseline name -> seconds.
    var baselines: [String: Double]
    var switchyard: Double
    /// Informational extra measurements (for example through ObjectContext), seconds.
    var extras: [String: Double] = [:]
    /// Informational values that are not times (for example peak memory), printed as given.
    var info: [String: String]? = nil

    var ratios: [String: Double] { baselines.mapValues { switchyard / $0 } }
}

/// Everything one run measured.
struct BenchReport: Codable {
    var objects: Int
    var lookups: Int
    var results: [BenchResult]
    var machine = BenchReport.machineDescription()

    static func machineDescription() -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        return "\(cores) cores, \(String(format: "%.0f", memory)) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)"
    }

    /// A Markdown table, as pasted into the README.
    var table: String {
        var lines = ["objects: \(objects), lookups: \(lookups), machine: \(machine)", "",
                     "| backend | operation | baseline | baseline time | Switchyard | ratio | notes |",
                     "|---|---|---|---|---|---|---|"]
        for r in results {
            let notes = (r.extras.sorted(by: { $0.key < $1.key }).map { "\($0.key): \(ms($0.value))" }
                + (r.info ?? [:]).sorted(by: { $0.key < $1.key }).map { "\($0.key): \($0.value)" }).joined(separator: "; ")
            if r.baselines.isEmpty {
                lines.append("| \(r.backend) | \(r.operation) | – | – | \(ms(r.switchyard)) | – | \(notes) |")
            }
            for (name, t) in r.baselines.sorted(by: { $0.key < $1.key }) {
                lines.append("| \(r.backend) | \(r.operation) | \(name) | \(ms(t)) | \(ms(r.switchyard)) | \(String(format: "%.2f", r.switchyard / t)) | \(notes) |")
            }
        }
        return lines.joined(separator: "\n")
    }

    private func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
}

/// Deterministic rows every contender writes and reads.
struct BenchData {
    struct Message {
        var messageID: String
        var text: String
        var sentAt: Double
        var score: Double
        var isRead: Bool
        var priority: Int64
        var sequence: Int64
    }
    let messages: [Message]
    /// Message IDs to look up by indexed equality.
    let lookupIDs: [String]

    /// The messages as store rows with primary keys from `keys`, as every store-level contender writes them.
    func storeRows(keys: ClosedRange<Int64>) -> [StoreRow] {
        zip(messages, keys).map { m, pk in
            StoreRow(entityName: "Message", primaryKey: pk, values: [
                "messageID": .string(m.messageID), "text": .string(m.text),
                "sentAt": .date(Date(timeIntervalSinceReferenceDate: m.sentAt)), "score": .double(m.score),
                "isRead": .bool(m.isRead), "priority": .integer(m.priority), "sequence": .integer(m.sequence),
            ])
        }
    }

    /// Inserts every message through `context` and saves: the same work for each backend's context run.
    func insertAndSave(through context: ObjectContext) throws {
        for m in messages {
            let o = try context.insert("Message")
            try o.set("messageID", m.messageID)
            try o.set("text", m.text)
            try o.set("sentAt", Date(timeIntervalSinceReferenceDate: m.sentAt))
            try o.set("score", m.score)
            try o.set("isRead", m.isRead)
            try o.set("priority", m.priority)
            try o.set("sequence", m.sequence)
        }
        try context.save()
    }

    /// `count` messages numbered from `offset`, and `lookups` IDs among them to look up.
    init(count: Int, lookups: Int, offset: Int = 0) {
        messages = (offset..<(offset + count)).map { (i: Int) -> Message in
            let sentAt: Double = 700_000_000 + Double(i)
            let score: Double = Double(i % 1000) / 10
            return Message(
                messageID: "m\(i)", text: "Message number \(i), with a little text to make it realistic",
                sentAt: sentAt, score: score, isRead: i % 2 == 0, priority: Int64(i % 5), sequence: Int64(i))
        }
        var generator = SplitMix(seed: 42)
        lookupIDs = (0..<lookups).map { _ in "m\(offset + Int(generator.next() % UInt64(count)))" }
    }
}

/// A tiny seeded generator so every run looks up the same IDs.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs `body` `repeats` times (with `prepare` before each, untimed) and returns the best time in seconds.
func measure(repeats: Int, prepare: () throws -> Void = {}, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<repeats {
        try prepare()
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return best
}
