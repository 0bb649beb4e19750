import Foundation
import Switchyard

// MARK: - ModelGraph

/// A model as Graphviz dot: one cluster per named configuration (an entity sits in the first that lists it),
/// solid edges for relationships (one per inverse pair; `*` marks a to-many end), dashed edges for fetched
/// properties, red where source and destination share no configuration.
enum ModelGraph {
    static func dot(_ model: ObjectModel) -> String {
        var out = "digraph model {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n"
        var placed: Set<String> = []
        for (index, configuration) in model.configurations.enumerated() {
            out += "  subgraph cluster_\(index) {\n    label=\(quote(configuration.name));\n    style=rounded;\n"
            for name in configuration.entityNames where placed.insert(name).inserted {
                if let entity = model.entity(named: name) { out += "    " + node(entity) + "\n" }
            }
            out += "  }\n"
        }
        for entity in model.entities where !placed.contains(entity.name) { out += "  " + node(entity) + "\n" }
        var drawn: Set<String> = []
        for entity in model.entities {
            if let parent = entity.parentName {
                out += "  \(quote(entity.name)) -> \(quote(parent)) [arrowhead=empty, style=bold];\n"
            }
            for r in entity.relationships {
                let key = [entity.name + "." + r.name, r.destinationEntityName + "." + (r.inverseName ?? "")].sorted().joined(separator: "|")
                guard r.inverseName == nil || drawn.insert(key).inserted else { continue }
                let inverse = r.inverseName.flatMap { model.entity(named: r.destinationEntityName)?.relationship(named: $0) }
                var label = r.name + (r.isToMany ? " *" : "")
                if let inverse { label += " / " + inverse.name + (inverse.isToMany ? " *" : "") }
                let dir = inverse == nil ? "" : ", dir=both"
                out += "  \(quote(entity.name)) -> \(quote(r.destinationEntityName)) [label=\(quote(label))\(dir)];\n"
            }
            for f in entity.fetchedProperties {
                let crosses = Set(model.configurations(containing: entity.name))
                    .isDisjoint(with: model.configurations(containing: f.destinationEntityName))
                    && !model.configurations.isEmpty
                let color = crosses ? ", color=red, fontcolor=red" : ""
                out += "  \(quote(entity.name)) -> \(quote(f.destinationEntityName)) [style=dashed, label=\(quote(f.name + ": " + f.predicateFormat))\(color)];\n"
            }
        }
        return out + "}\n"
    }

    private static func node(_ entity: EntityDescription) -> String {
        let attributes = entity.attributes.map { "\($0.name): \($0.type.rawValue)" }
        let label = ([entity.name + (entity.isAbstract ? " (abstract)" : "")] + attributes).map { $0 + "\\l" }.joined()
        return "\(quote(entity.name)) [label=\"\(escape(label, keepBackslashes: true))\"];"
    }

    private static func quote(_ s: String) -> String { "\"" + escape(s, keepBackslashes: false) + "\"" }

    private static func escape(_ s: String, keepBackslashes: Bool) -> String {
        var t = keepBackslashes ? s : s.replacingOccurrences(of: "\\", with: "\\\\")
        t = t.replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: " ")
        return t
    }
}
