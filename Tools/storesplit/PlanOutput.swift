import Foundation
import Switchyard

// MARK: - PlanOutput

/// The plan and the report as text for people and JSON for scripts (both on stdout).
enum PlanOutput {
    static func printJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = try encoder.encode(value)
        data.append(0x0A)
        FileHandle.standardOutput.write(data)
    }

    static func printJSON(_ plan: SplitPlan) throws {
        try printJSON(PlanJSON(plan))
    }

    static func printText(_ plan: SplitPlan) {
        var out = "plan: \(plan.source.path) (\(plan.sourceType.rawValue), model from \(plan.sourceModelOrigin)), "
            + "\(plan.rowCount) rows\n"
        for (index, destination) in plan.destinations.enumerated() {
            out += "  \(destination.configuration) -> \(destination.displayPath) (\(destination.type.rawValue))\n"
            for copy in plan.entities where copy.destination == index {
                let renamed = copy.sourceEntity == copy.targetEntity ? "" : " (was \(copy.sourceEntity))"
                out += "    \(copy.targetEntity)\(renamed): \(copy.rowCount) rows\n"
            }
        }
        if !plan.conversions.isEmpty {
            out += "  cross-store relationships become attributes:\n"
            for c in plan.conversions {
                let what = c.kind == .primaryKey ? "primary key of \(c.destinationEntity)" : "\(c.destinationEntity).\(c.key ?? "?")"
                out += "    \(c.entity).\(c.relationship) (\(c.fromConfiguration) -> \(c.toConfiguration)) -> \(c.entity).\(c.attribute) = \(what)\n"
            }
        }
        if !plan.links.isEmpty {
            out += "  to-many links copied after the rows:\n"
            for link in plan.links {
                out += "    \(link.entity).\(link.relationship) <-> \(link.inverseEntity).\(link.inverse) in \(link.configuration): "
                    + describe(link) + "\n"
            }
        }
        if !plan.skipped.isEmpty {
            out += "  skipped:\n"
            for s in plan.skipped {
                out += "    \(s.kind) \(s.name)" + (s.rows.map { " (\($0) rows)" } ?? "") + ": \(s.reason)\n"
            }
        }
        for warning in plan.warnings { out += "  warning: \(warning)\n" }
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    static func printText(_ report: SplitReport) {
        var out = ""
        for output in report.outputs {
            let rows = output.entities.reduce(0) { $0 + $1.rows }
            out += "\(output.configuration): \(output.path) (\(output.type.rawValue)), \(rows) rows\n"
            for entity in output.entities {
                out += "  \(entity.targetEntity): \(entity.rows) rows" + (entity.checksum.map { ", checksum \($0)" } ?? "") + "\n"
            }
            for link in output.links {
                out += "  \(link.entity).\(link.relationship): \(link.links) links" + (link.checksum.map { ", checksum \($0)" } ?? "") + "\n"
            }
            if output.externalDataFiles > 0 {
                out += "  external data: \(output.externalDataFiles) files in \(URL(fileURLWithPath: output.path).deletingLastPathComponent().path)/.\(URL(fileURLWithPath: output.path).deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA\n"
            }
            for (root, recorded) in output.raisedPrimaryKeyMaxima.sorted(by: { $0.key < $1.key }) {
                out += "  Z_MAX of \(root) raised from \(recorded) to \(output.primaryKeyMaxima[root] ?? 0), the largest primary key\n"
            }
        }
        let seconds = String(format: "%.2f", report.seconds)
        out += "copied \(report.rowsCopied) rows in \(seconds) s (\(Int(report.rowsPerSecond)) rows/s); "
            + (report.contentVerified ? "verified: row counts, content and link checksums match" : "row counts match")
            + (report.peakMemoryBytes.map { String(format: "; peak memory %.1f MB\n", Double($0) / 1_048_576) } ?? "\n")
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    private static func describe(_ link: SplitPlan.LinkCopy) -> String {
        switch link.kind {
        case .order: return "member order"
        case .withoutInverse:
            return "to-many without inverse (members' owner\(link.ordered ? " and order" : ""))"
        case .manyToMany:
            let orders = [link.ordered ? link.relationship : nil, link.inverseOrdered ? link.inverse : nil].compactMap { $0 }
            return "many-to-many links" + (orders.isEmpty ? "" : " with the order of \(orders.joined(separator: " and "))")
        }
    }
}

/// The plan's public parts, encodable.
private struct PlanJSON: Encodable {
    struct Destination: Encodable {
        var configuration: String
        var path: String
        var type: StoreType
    }
    var dryRun = true
    var source: String
    var sourceType: StoreType
    var sourceModel: String
    var rows: Int
    var destinations: [Destination]
    var entities: [SplitPlan.EntityCopy]
    var conversions: [SplitPlan.Conversion]
    var links: [SplitPlan.LinkCopy]
    var skipped: [SplitPlan.Skipped]
    var warnings: [String]

    init(_ plan: SplitPlan) {
        source = plan.source.path
        sourceType = plan.sourceType
        sourceModel = plan.sourceModelOrigin
        rows = plan.rowCount
        destinations = plan.destinations.map { Destination(configuration: $0.configuration, path: $0.displayPath, type: $0.type) }
        entities = plan.entities
        conversions = plan.conversions
        links = plan.links
        skipped = plan.skipped
        warnings = plan.warnings
    }
}
