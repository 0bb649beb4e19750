import Foundation
import SwitchyardModel

// Core Data's SQL layout (tables `Z<ENTITY>`, columns `Z<PROPERTY>`, join tables `Z_<n><REL>`, hidden foreign
// keys), computed from a model. The SQLite store writes it in Core Data's own files; the PostgreSQL store uses
// the same names in its schema, so one place decides them.

// MARK: - Column and index descriptions

/// One column of an entity table after `Z_PK`, `Z_ENT`, `Z_OPT`.
package struct SQLiteColumnSpec: Sendable, Hashable {
    package var name: String
    package var sqlType: String
}

/// An index Core Data would create on an entity table.
package struct SQLiteIndexSpec: Sendable, Hashable {
    package var name: String
    package var table: String
    /// The indexed columns, in order.
    package var terms: [Term]
    package var isUnique: Bool

    /// One indexed column and what follows its (quoted) name, from a fixed set: `COLLATE BINARY ASC|DESC` or
    /// nothing. Column names come from model files, so they are never pasted into SQL unquoted.
    package struct Term: Sendable, Hashable {
        package var column: String
        package var order: Order = .plain

        package enum Order: String, Sendable, Hashable {
            case plain = ""
            case ascending = " COLLATE BINARY ASC"
            case descending = " COLLATE BINARY DESC"
        }
    }

    package var createSQL: String {
        let columns = terms.map { SQLiteNames.ddl($0.column) + $0.order.rawValue }.joined(separator: ", ")
        return "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(SQLiteNames.ddl(name)) ON \(SQLiteNames.ddl(table)) (\(columns))"
    }
}

/// A uniqueness constraint as the table enforces it, for naming the properties when SQLite reports a violation.
package struct SQLiteUniqueConstraint: Sendable, Hashable {
    package var entity: String
    package var properties: [String]
    package var columns: [String]
}

/// Where an attribute lives in its table.
package struct SQLiteAttributeMapping: Sendable, Hashable {
    package var name: String
    package var type: AttributeType
    package var column: String
    /// Binary data with Core Data's external storage: the column holds a marker and the value or a file name
    /// (`SQLiteExternalData`).
    package var isExternal = false
}

/// Where the members of a to-many without inverse keep their owner: Core Data's hidden foreign key
/// `Z<n><NAME>` in the destination's table (`n` the owner entity's number, `NAME` the relationship's), and,
/// for an ordered one, the position `Z_FOK_<n><NAME>` beside it.
package struct SQLiteHiddenKey: Sendable, Hashable {
    /// The relationship's destination entity.
    package var destination: String
    package var table: String
    package var column: String
    package var orderColumn: String?

    /// The layout-builder key of the hidden column of end `endKey` (`Entity.relationship`).
    package static func property(_ endKey: String) -> String { "\u{0}hidden:" + endKey }
    /// The layout-builder key of its position column.
    package static func orderProperty(_ endKey: String) -> String { "\u{0}hiddenorder:" + endKey }

    /// The existing hidden key (`ordered`: position) column of to-many `relationship` among a table's `columns`
    /// (real spellings): `Z<number><NAME>` with the owner's number, else the one `Z<digits><NAME>` column (real
    /// stores number entities differently); nil when there is none, or several and none with the owner's number.
    package static func existingColumn(of relationship: String, ownerNumber: Int64?, ordered: Bool, among columns: some Collection<String>) -> String? {
        let prefix = ordered ? "Z_FOK_" : "Z", name = relationship.uppercased()
        if let n = ownerNumber, let numbered = columns.first(where: { $0.uppercased() == prefix + "\(n)" + name }) { return numbered }
        let matches = columns.filter { isColumn($0, of: relationship, ordered: ordered) }
        return matches.count == 1 ? matches[0] : nil
    }

    /// Whether `column` is spelled as a hidden key (`ordered`: position) column of to-many `relationship` with
    /// any owner number: `Z<digits><NAME>` (`Z_FOK_<digits><NAME>`), any case.
    package static func isColumn(_ column: String, of relationship: String, ordered: Bool) -> Bool {
        let prefix = ordered ? "Z_FOK_" : "Z", name = relationship.uppercased(), upper = column.uppercased()
        guard upper.hasPrefix(prefix), upper.hasSuffix(name), upper.count > prefix.count + name.count else { return false }
        return upper.dropFirst(prefix.count).dropLast(name.count).allSatisfy(\.isNumber)
    }
}

/// Where a to-one relationship lives: the foreign key, and `Z<n>_<REL>` (the destination's `Z_ENT`) when the
/// destination entity has subentities.
package struct SQLiteToOneMapping: Sendable, Hashable {
    package var name: String
    package var destination: String
    package var column: String
    package var entityColumn: String?
    /// `Z_FOK_<REL>`: the row's position in its owner's list when the inverse is an ordered to-many (`nil` when
    /// it is not, or an existing store lacks the column).
    package var orderColumn: String? = nil
}

// MARK: - SQLiteTableLayout

/// The table of one inheritance tree: `Z<ROOT>` with every column of the root and all its descendants,
/// ordered as Core Data orders them.
package struct SQLiteTableLayout: Sendable, Hashable {
    /// `Z<ROOTENTITYUPPERCASED>`.
    package var name: String
    package var rootName: String
    /// The tree, root first, descendants depth-first (model order).
    package var entityNames: [String]
    package var columns: [SQLiteColumnSpec]
    package var indexes: [SQLiteIndexSpec]
    package var uniqueConstraints: [SQLiteUniqueConstraint]

    /// `CREATE TABLE` in Core Data's spelling.
    package var createSQL: String {
        let cols = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            + columns.map { "\(SQLiteNames.ddl($0.name)) \($0.sqlType)" }
        return "CREATE TABLE \(SQLiteNames.ddl(name)) ( \(cols.joined(separator: ", ")) )"
    }
}

// MARK: - SQLiteEntityLayout

/// Everything the store needs to read and write rows of one concrete entity, computed once at open.
package struct SQLiteEntityLayout: Sendable, Hashable {
    package var name: String
    /// `Z_ENT` in this store (the model's number for a new store, `Z_PRIMARYKEY`'s for an existing one).
    package var number: Int64
    package var rootName: String
    package var table: String
    /// `Z_ENT` of this entity and every descendant the store knows.
    package var familyNumbers: [Int64]
    /// Persistent attributes, own and inherited, in model order.
    package var attributes: [SQLiteAttributeMapping]
    /// Persistent to-one relationships, own and inherited, in model order.
    package var toOnes: [SQLiteToOneMapping]
    package var attributeIndex: [String: Int]
    package var toOneIndex: [String: Int]
    /// Transient attribute names: accepted in a row's values and ignored.
    package var transientNames: Set<String>

    /// The columns an insert writes after `Z_PK, Z_ENT, Z_OPT`, in bind order.
    package var insertColumns: [String] {
        attributes.map(\.column) + toOnes.flatMap { [$0.column] + ($0.entityColumn.map { [$0] } ?? []) }
    }

    /// `INSERT INTO T (Z_PK, Z_ENT, Z_OPT, ...) VALUES (?, ...)`, built once so the statement cache hits.
    package var insertSQL: String {
        let cols = ["Z_PK", "Z_ENT", "Z_OPT"] + insertColumns
        return "INSERT INTO \(SQLiteNames.quote(table)) (\(cols.map(SQLiteNames.quote).joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: cols.count).joined(separator: ", ") + ")"
    }
}

// MARK: - SQLiteNames

/// Identifier spelling: quoted in statements we run, bare in DDL where Core Data writes them bare.
package enum SQLiteNames {
    /// `"name"`, with embedded quotes doubled.
    package static func quote(_ name: String) -> String {
        // Foundation's replacingOccurrences is slow enough to show in fetch timings; names rarely hold quotes.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Bare when the name is a plain identifier (so `.schema` reads like Core Data's), quoted otherwise.
    package static func ddl(_ name: String) -> String {
        let plain = !name.isEmpty && name.utf8.allSatisfy { c in
            (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95
        } && !(name.utf8.first.map { $0 >= 48 && $0 <= 57 } ?? true)
        return plain ? name : quote(name)
    }

    /// `Z` + the name upper-cased, Core Data's column and table naming.
    package static func column(for property: String) -> String { "Z" + property.uppercased() }

    /// The table of an inheritance root.
    package static func table(for root: String) -> String { "Z" + root.uppercased() }

    /// `Z<n>_<REL>`: the column holding the destination's `Z_ENT` when it has subentities.
    package static func entityColumn(for relationship: String, destinationNumber: Int64) -> String {
        "Z\(destinationNumber)_\(relationship.uppercased())"
    }

    /// Whether `column` is an entity column of `relationship` numbered as `expected` is: `Z<n>_<REL>` with any
    /// `n` (real stores number the destination differently), then the same count as `expected` when a
    /// repeated name in one table got one (`Z7_OWNER1`, `ZOWNER1`'s entity column, next to another subentity's
    /// `Z7_OWNER`). An empty `expected` means unnumbered.
    package static func isEntityColumn(_ column: String, of relationship: String, numberedAs expected: String) -> Bool {
        let rel = relationship.uppercased()
        /// What follows `Z<digits>_`, upper-cased; nil for another form.
        func tail(_ name: String) -> Substring? {
            let upper = name.uppercased()
            guard upper.hasPrefix("Z"), let underscore = upper.firstIndex(of: "_") else { return nil }
            let digits = upper[upper.index(after: upper.startIndex)..<underscore]
            guard !digits.isEmpty, digits.allSatisfy(\.isNumber) else { return nil }
            return upper[upper.index(after: underscore)...]
        }
        guard let rest = tail(column), rest.hasPrefix(rel) else { return false }
        let count = tail(expected).flatMap { $0.hasPrefix(rel) ? $0.dropFirst(rel.count) : nil } ?? ""
        return rest.dropFirst(rel.count) == count
    }
}

// MARK: - Building the layout

/// Computes the tables Core Data would create for a configuration, with the entity numbers given.
package struct SQLiteLayoutBuilder {
    package let model: ObjectModel
    /// Store entity numbers by entity name.
    package let numbers: [String: Int64]

    /// A builder for `model`'s tables with the store's entity numbers.
    package init(model: ObjectModel, numbers: [String: Int64]) {
        self.model = model
        self.numbers = numbers
    }

    /// Sort group of a column: Core Data puts integers (and foreign keys) first, then dates and floating point,
    /// decimals, strings, UUIDs, and binaries last; the fixtures' tables all follow this order.
    private static func rank(_ type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: return 0
        case .date, .double, .float: return 1
        case .decimal: return 2
        case .string, .uri, .objectID: return 3
        case .uuid: return 4
        case .binary, .transformable, .undefined: return 5
        }
    }

    private struct Entry {
        var rank: Int
        var treeIndex: Int
        var kind: Int
        var name: String
        var column: SQLiteColumnSpec
    }

    /// The layout of the tree rooted at `root`, with the column name chosen for every (entity, property).
    package func table(root: EntityDescription) -> (SQLiteTableLayout, [String: [String: String]]) {
        let tree = [root] + root.descendantNames.compactMap { model.entity(named: $0) }
        var taken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        // Core Data numbers a repeated name (two subentities declaring `name`): ZNAME, ZNAME1, ZNAME2...
        func allocate(_ base: String) -> String {
            if taken.insert(base.uppercased()).inserted { return base }
            var n = 1
            while !taken.insert("\(base)\(n)".uppercased()).inserted { n += 1 }
            return "\(base)\(n)"
        }
        var entries: [Entry] = []
        var columnsByEntity: [String: [String: String]] = [:]
        for (k, entity) in tree.enumerated() {
            var own: [String: String] = [:]
            for attribute in entity.attributes where !attribute.isTransient && attribute.type != .undefined {
                let col = allocate(SQLiteNames.column(for: attribute.name))
                own[attribute.name] = col
                entries.append(Entry(rank: Self.rank(attribute.type), treeIndex: k, kind: 0, name: attribute.name,
                                     column: SQLiteColumnSpec(name: col, sqlType: attribute.type.sqlColumnType)))
            }
            for relationship in entity.relationships where !relationship.isTransient && !relationship.isToMany {
                let col = allocate(SQLiteNames.column(for: relationship.name))
                own[relationship.name] = col
                entries.append(Entry(rank: 0, treeIndex: k, kind: 1, name: relationship.name,
                                     column: SQLiteColumnSpec(name: col, sqlType: "INTEGER")))
                if let destination = model.entity(named: relationship.destinationEntityName),
                    !destination.subentityNames.isEmpty
                {
                    let n = numbers[destination.name] ?? Int64(destination.entityNumber)
                    let ecol = allocate(SQLiteNames.entityColumn(for: relationship.name, destinationNumber: n))
                    own[relationship.name + "\u{0}entity"] = ecol
                    entries.append(Entry(rank: 0, treeIndex: k, kind: 1, name: relationship.name + "\u{0}entity",
                                         column: SQLiteColumnSpec(name: ecol, sqlType: "INTEGER")))
                }
                // The member side of an ordered to-many keeps its position next to its foreign key.
                if let inverse = model.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    let ocol = allocate("Z_FOK_" + relationship.name.uppercased())
                    own[relationship.name + "\u{0}order"] = ocol
                    entries.append(Entry(rank: 0, treeIndex: k, kind: 1, name: relationship.name + "\u{0}order",
                                         column: SQLiteColumnSpec(name: ocol, sqlType: "INTEGER")))
                }
            }
            // Core Data's hidden foreign keys of the to-manys without inverse leading here, after the entity's
            // own foreign keys (the CartKit fixtures' ZCDCARTITEMMODIFIER: ..., ZITEM, Z2MODIFIERS, ...).
            for end in hiddenEnds(destination: entity.name) {
                let n = numbers[end.entityName] ?? Int64(model.entity(named: end.entityName)?.entityNumber ?? 0)
                let col = allocate("Z\(n)" + end.relationship.name.uppercased())
                own[SQLiteHiddenKey.property(end.key)] = col
                entries.append(Entry(rank: 0, treeIndex: k, kind: 2, name: col, column: SQLiteColumnSpec(name: col, sqlType: "INTEGER")))
                if end.relationship.isOrdered {
                    let ocol = allocate("Z_FOK_\(n)" + end.relationship.name.uppercased())
                    own[SQLiteHiddenKey.orderProperty(end.key)] = ocol
                    entries.append(Entry(rank: 0, treeIndex: k, kind: 3, name: ocol, column: SQLiteColumnSpec(name: ocol, sqlType: "INTEGER")))
                }
            }
            columnsByEntity[entity.name] = own
        }
        entries.sort { a, b in
            (a.rank, a.treeIndex, a.kind, a.name) < (b.rank, b.treeIndex, b.kind, b.name)
        }
        let tableName = SQLiteNames.table(for: root.name)
        let (indexes, constraints) = indexes(tree: tree, table: tableName, columnsByEntity: columnsByEntity)
        let layout = SQLiteTableLayout(
            name: tableName, rootName: root.name, entityNames: tree.map(\.name), columns: entries.map(\.column),
            indexes: indexes, uniqueConstraints: constraints)
        return (layout, columnsByEntity)
    }

    /// The to-manys without inverse (as declared) whose destination is exactly `entityName`.
    package func hiddenEnds(destination entityName: String) -> [RelationshipEnd] {
        model.entities.flatMap { owner in
            owner.relationships.filter { model.isToManyWithoutInverse($0) && $0.destinationEntityName == entityName }
                .map { RelationshipEnd(entityName: owner.name, relationship: $0) }
        }.sorted { $0.key < $1.key }
    }

    /// Core Data's indexes: one per foreign key, `Z_ENT` when the table holds several entities, legacy
    /// per-attribute and compound indexes, fetch indexes, and a unique index per uniqueness constraint.
    private func indexes(
        tree: [EntityDescription], table: String, columnsByEntity: [String: [String: String]]
    ) -> ([SQLiteIndexSpec], [SQLiteUniqueConstraint]) {
        var result: [SQLiteIndexSpec] = []
        var names: Set<String> = []
        func add(_ spec: SQLiteIndexSpec) {
            if names.insert(spec.name.uppercased()).inserted { result.append(spec) }
        }
        // A property's column, looking through the entity's ancestors (inherited properties).
        func column(_ property: String, of entity: EntityDescription) -> String? {
            if let c = columnsByEntity[entity.name]?[property] { return c }
            for ancestor in model.ancestors(of: entity) {
                if let c = columnsByEntity[ancestor.name]?[property] { return c }
            }
            return nil
        }
        for entity in tree {
            for relationship in entity.relationships where !relationship.isTransient && !relationship.isToMany {
                guard let col = columnsByEntity[entity.name]?[relationship.name] else { continue }
                add(SQLiteIndexSpec(name: "\(table)_\(col)_INDEX", table: table, terms: [.init(column: col)], isUnique: false))
            }
            for end in hiddenEnds(destination: entity.name) {
                guard let col = columnsByEntity[entity.name]?[SQLiteHiddenKey.property(end.key)] else { continue }
                add(SQLiteIndexSpec(name: "\(table)_\(col)_INDEX", table: table, terms: [.init(column: col)], isUnique: false))
            }
        }
        if tree.count > 1 {
            add(SQLiteIndexSpec(name: "\(table)_Z_ENT_INDEX", table: table, terms: [.init(column: "Z_ENT")], isUnique: false))
        }
        for entity in tree {
            for attribute in entity.attributes where attribute.isIndexed && !attribute.isTransient {
                guard let col = columnsByEntity[entity.name]?[attribute.name] else { continue }
                add(SQLiteIndexSpec(name: "\(table)_\(col)_INDEX", table: table, terms: [.init(column: col)], isUnique: false))
            }
            for index in entity.indexes {
                let cols = index.elements.compactMap { column($0.property, of: entity) }
                guard cols.count == index.elements.count, !cols.isEmpty else { continue }
                if index.name.hasPrefix("compound_") {
                    // Pre-2017 compound indexes: Core Data names them after the table and columns, no collation.
                    add(SQLiteIndexSpec(name: ([table] + cols).joined(separator: "_"), table: table,
                                        terms: cols.map { .init(column: $0) }, isUnique: false))
                } else {
                    let terms = zip(cols, index.elements).map {
                        SQLiteIndexSpec.Term(column: $0, order: $1.ascending ? .ascending : .descending)
                    }
                    add(SQLiteIndexSpec(name: "Z_\(entity.name)_\(index.name)", table: table, terms: terms, isUnique: false))
                }
            }
        }
        var constraints: [SQLiteUniqueConstraint] = []
        for entity in tree {
            for constraint in entity.uniquenessConstraints {
                let cols = constraint.compactMap { column($0, of: entity) }
                guard cols.count == constraint.count, !cols.isEmpty else { continue }
                constraints.append(SQLiteUniqueConstraint(entity: entity.name, properties: constraint, columns: cols))
                add(SQLiteIndexSpec(
                    name: "Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))", table: table,
                    terms: cols.map { .init(column: $0, order: .ascending) }, isUnique: true))
            }
        }
        return (result, constraints)
    }

    /// The entity layout of `entity`, given the column chosen for each declared property in its tree.
    /// `resolve` maps an expected column to the column the table really has (identity for a new store).
    package func entityLayout(
        _ entity: EntityDescription, table: String, columnsByEntity: [String: [String: String]],
        resolve: (_ expected: String, _ property: String, _ declaringEntity: EntityDescription) throws -> String?
    ) throws -> SQLiteEntityLayout {
        let lineage = model.ancestors(of: entity).reversed() + [entity]
        var attributes: [SQLiteAttributeMapping] = []
        var toOnes: [SQLiteToOneMapping] = []
        var transient: Set<String> = []
        for declaring in lineage {
            let own = columnsByEntity[declaring.name] ?? [:]
            for attribute in declaring.attributes {
                guard !attribute.isTransient, attribute.type != .undefined, let expected = own[attribute.name] else {
                    transient.insert(attribute.name)
                    continue
                }
                guard let col = try resolve(expected, attribute.name, declaring) else { continue }
                attributes.append(SQLiteAttributeMapping(
                    name: attribute.name, type: attribute.type, column: col,
                    isExternal: attribute.allowsExternalBinaryDataStorage && attribute.type == .binary))
            }
            for relationship in declaring.relationships where !relationship.isTransient && !relationship.isToMany {
                guard let expected = own[relationship.name],
                    let col = try resolve(expected, relationship.name, declaring)
                else { continue }
                var entityColumn: String?
                if let expectedEntity = own[relationship.name + "\u{0}entity"] {
                    entityColumn = try resolve(expectedEntity, relationship.name + "\u{0}entity", declaring)
                } else {
                    entityColumn = try resolve("", relationship.name + "\u{0}entity", declaring)
                }
                var orderColumn: String?
                if let expectedOrder = own[relationship.name + "\u{0}order"] {
                    orderColumn = try resolve(expectedOrder, relationship.name + "\u{0}order", declaring)
                }
                toOnes.append(SQLiteToOneMapping(
                    name: relationship.name, destination: relationship.destinationEntityName, column: col,
                    entityColumn: entityColumn, orderColumn: orderColumn))
            }
        }
        let family = entity.selfAndDescendantNames.compactMap { numbers[$0] }
        return SQLiteEntityLayout(
            name: entity.name, number: numbers[entity.name] ?? Int64(entity.entityNumber), rootName: entity.rootName,
            table: table, familyNumbers: family, attributes: attributes, toOnes: toOnes,
            attributeIndex: Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1.name, $0) }),
            toOneIndex: Dictionary(uniqueKeysWithValues: toOnes.enumerated().map { ($1.name, $0) }),
            transientNames: transient)
    }
}
