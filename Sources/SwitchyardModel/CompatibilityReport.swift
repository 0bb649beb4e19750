import Foundation

// MARK: - CompatibilityReport

/// What changed between the model a store was written with and the model it is opened with, entity by entity,
/// and whether each change can be migrated without help (inferred).
///
/// ```swift
/// let report = ModelDiff.compare(from: try store.storedModel()!, to: model, configuration: "Cloud")
/// if report.verdict == .incompatible { print(report.summary) }
/// ```
public struct CompatibilityReport: Sendable, Hashable, Codable {
    /// How a store written with the old model relates to the new one.
    public enum Verdict: String, Sendable, Hashable, Codable, Comparable {
        /// No structural difference at all.
        case identical
        /// Differences that need no change to stored data (optionality relaxed, counts, inverses...).
        case compatible
        /// Every change is inferable: the store can be migrated in place.
        case migratable
        /// At least one change cannot be inferred.
        case incompatible

        private var rank: Int {
            switch self {
            case .identical: return 0
            case .compatible: return 1
            case .migratable: return 2
            case .incompatible: return 3
            }
        }

        public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    }

    /// The configuration the report covers.
    public var configuration: String
    /// One entry per entity of either model's configuration: new entities by their new name, removed ones by
    /// their old name, sorted by name.
    public var entities: [EntityChange]

    /// Creates a report from its entity entries.
    public init(configuration: String, entities: [EntityChange]) {
        self.configuration = configuration
        self.entities = entities
    }

    /// The worst verdict of any entity.
    public var verdict: Verdict {
        entities.map(\.verdict).max() ?? .identical
    }

    /// True when nothing in the report blocks an in-place migration.
    public var isInferable: Bool { verdict != .incompatible }

    /// The changes that cannot be inferred, one line each (empty when the report is inferable).
    public var blockingReasons: [String] {
        entities.flatMap { entity -> [String] in
            var lines: [String] = []
            if !entity.isInferable, let reason = entity.reason { lines.append("\(entity.name): \(reason)") }
            for p in entity.properties where !p.isInferable {
                lines.append("\(entity.name).\(p.name): \(p.reason ?? p.detail)")
            }
            return lines
        }
    }

    /// A human-readable, multi-line account of every entity that is not unchanged.
    public var summary: String {
        var lines = ["configuration \(configuration): \(verdict.rawValue)"]
        for entity in entities where entity.kind != .unchanged {
            var head = "  \(entity.name): \(entity.kind.rawValue)"
            if let old = entity.oldName, old != entity.name { head += " (was \(old))" }
            if !entity.isInferable { head += " — NOT inferable" + (entity.reason.map { ": \($0)" } ?? "") }
            lines.append(head)
            for p in entity.properties {
                var line = "    \(p.name): \(p.kind.rawValue) — \(p.detail)"
                if !p.isInferable { line += " — NOT inferable" + (p.reason.map { ": \($0)" } ?? "") }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: - EntityChange

/// How one entity changed.
public struct EntityChange: Sendable, Hashable, Codable {
    /// The kind of change to the entity as a whole.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Structurally the same.
        case unchanged
        /// Only in the new model.
        case added
        /// Only in the old model: its rows are dropped.
        case removed
        /// Matched through the new entity's renaming identifier (possibly with property changes too).
        case renamed
        /// Same name, different properties or flags.
        case changed
    }

    /// The entity's name in the new model (its old name for a removed entity).
    public var name: String
    /// The entity's name in the old model (nil for an added entity).
    public var oldName: String?
    /// What happened to the entity as a whole.
    public var kind: Kind
    /// Property changes (empty for unchanged, added and removed entities).
    public var properties: [PropertyChange]
    /// Whether the entity-level change itself can be inferred (properties carry their own flag).
    public var isInferable: Bool
    /// Why the entity-level change cannot be inferred, or a note on it.
    public var reason: String?

    /// Creates an entity entry.
    public init(
        name: String, oldName: String?, kind: Kind, properties: [PropertyChange] = [], isInferable: Bool = true,
        reason: String? = nil
    ) {
        self.name = name
        self.oldName = oldName
        self.kind = kind
        self.properties = properties
        self.isInferable = isInferable
        self.reason = reason
    }

    /// The entity's verdict: its own change combined with its properties'.
    public var verdict: CompatibilityReport.Verdict {
        if !isInferable || properties.contains(where: { !$0.isInferable }) { return .incompatible }
        switch kind {
        case .unchanged: return .identical
        case .added, .removed, .renamed: return .migratable
        case .changed:
            return properties.contains(where: \.changesStoredData) ? .migratable : .compatible
        }
    }
}

// MARK: - PropertyChange

/// How one attribute or relationship changed.
public struct PropertyChange: Sendable, Hashable, Codable {
    /// The kind of change.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Only in the new model.
        case added
        /// Only in the old model: its values are dropped.
        case removed
        /// Matched through the new property's renaming identifier.
        case renamed
        /// The attribute's storage type changed (never inferable).
        case typeChanged
        /// A type change every stored value survives unchanged (integer widening, Transformable <-> Binary).
        case typeWidened
        /// Optional became required (inferable with a default value).
        case becameRequired
        /// Required became optional.
        case becameOptional
        /// A to-one became a to-many (its key column goes; the inverse keeps the link, or, when the inverse is a
        /// to-many, the pair becomes a many-to-many and each key becomes a link).
        case toOneBecameToMany
        /// A to-many became a to-one (filled from the inverse to-one where there is one). Not inferable when it
        /// was a many-to-many (all but one link per row would be dropped).
        case toManyBecameToOne
        /// The relationship points at another entity (never inferable).
        case destinationChanged
        /// Ordered became unordered or the reverse: the store adds or drops its positions (SQLite's `Z_FOK_`
        /// column, LMDB's `links` positions); existing members keep primary-key order.
        case orderingChanged
        /// Inverse, minimum/maximum count or other validation-only details changed; or a to-many gained a new
        /// to-one inverse or lost its to-one inverse with the to-one, its members' owners moving between the
        /// inverse's key and the key kept without one (see `ModelDiff`).
        case detailsChanged
    }

    /// The property's name in the new model (its old name when removed).
    public var name: String
    /// The property's name in the old model (nil for an added property).
    public var oldName: String?
    /// True for a relationship, false for an attribute.
    public var isRelationship: Bool
    /// What happened to the property.
    public var kind: Kind
    /// What changed, in words (for example `Integer 32 -> String`).
    public var detail: String
    /// Whether the change can be migrated without help.
    public var isInferable: Bool
    /// Why the change cannot be inferred (nil when it can).
    public var reason: String?

    /// Creates a property entry.
    public init(
        name: String, oldName: String? = nil, isRelationship: Bool, kind: Kind, detail: String,
        isInferable: Bool = true, reason: String? = nil
    ) {
        self.name = name
        self.oldName = oldName
        self.isRelationship = isRelationship
        self.kind = kind
        self.detail = detail
        self.isInferable = isInferable
        self.reason = reason
    }

    /// Whether migrating this change writes to the store (false for validation-only changes).
    public var changesStoredData: Bool {
        switch kind {
        case .becameOptional, .detailsChanged, .typeWidened: return false
        default: return true
        }
    }
}
