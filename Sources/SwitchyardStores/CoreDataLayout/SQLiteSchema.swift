import Foundation
import SwitchyardModel

// MARK: - SQLiteProjection

/// The columns a fetch selects for one entity (and its subentities), and how to turn each row back into a
/// `StoreRow` by its `Z_ENT`. Computed once at open so reading a row builds no strings.
package struct SQLiteProjection: Sendable {
    /// Reads one concrete entity's values out of the selected columns.
    package struct Reader: Sendable {
        package struct Attribute: Sendable {
            /// Result column index.
            package var column: Int32
            package var name: String
            package var type: AttributeType
            /// Core Data's external storage marker precedes the value (`SQLiteExternalData`).
            package var isExternal = false
        }
        package struct ToOne: Sendable {
            package var column: Int32
            package var entityColumn: Int32?
            package var name: String
            package var destination: String
        }
        package var entityName: String
        package var attributes: [Attribute]
        package var toOnes: [ToOne]
        /// Positions of `StoreRow.values`: `attributes`' order.
        package var rowLayout: RowLayout

        package init(entityName: String, attributes: [Attribute], toOnes: [ToOne]) {
            self.entityName = entityName
            self.attributes = attributes
            self.toOnes = toOnes
            rowLayout = RowLayout(names: attributes.map(\.name), types: attributes.map(\.type))
        }
    }

    /// Columns after `Z_PK, Z_ENT, Z_OPT` (indexes 0-2), in table order.
    package var columns: [String]
    /// `t0."Z_PK", t0."Z_ENT", ...`.
    package var selectList: String
    package var readers: [Int64: Reader]
}

// MARK: - SQLiteSchema

/// The store's tables as they are (existing store) or will be (new store), mapped to the model.
package struct SQLiteSchema: Sendable {
    /// Tables by root entity name, in entity-number order.
    package var tables: [SQLiteTableLayout]
    package var tableByRoot: [String: Int]
    /// Layouts of every entity whose tree the configuration touches.
    package var entities: [String: SQLiteEntityLayout]
    package var entityNamesByNumber: [Int64: String]
    /// Table name -> `Z_ENT` of every entity whose rows it holds.
    package var tableEntityNumbers: [String: [Int64]]
    /// Projections with and without subentities, by entity name.
    package var projections: [String: SQLiteProjection]
    package var exactProjections: [String: SQLiteProjection]
    /// Join tables of the many-to-many relationships whose two ends this store holds.
    package var joinTables: [SQLiteJoinTable] = []
    /// Position in `joinTables` by `RelationshipEnd.key`, for both ends.
    package var joinByEnd: [String: Int] = [:]

    /// Whether any entity has an attribute kept in Core Data's external storage format.
    package var hasExternalData: Bool { entities.values.contains { $0.attributes.contains(where: \.isExternal) } }

    /// Hidden foreign keys of the to-manys without inverse whose destination this store holds, by end key.
    package var hiddenKeys: [String: SQLiteHiddenKey] = [:]

    /// The join table of many-to-many end `endKey`, seen from that end.
    package func join(_ endKey: String) -> SQLiteJoinTable.Side? {
        joinByEnd[endKey].map { joinTables[$0].side(from: endKey) }
    }

    /// The table holding `entity`'s rows.
    package func table(of entity: SQLiteEntityLayout) -> SQLiteTableLayout {
        tables[tableByRoot[entity.rootName] ?? 0]
    }

    /// The roots of `entities`' inheritance trees, in entity-number order.
    package static func roots(of entities: [EntityDescription], in model: ObjectModel) -> [EntityDescription] {
        var seen: Set<String> = []
        return entities.compactMap { e in
            seen.insert(e.rootName).inserted ? model.entity(named: e.rootName) : nil
        }.sorted { $0.entityNumber < $1.entityNumber }
    }

    /// Builds the schema. `actualColumns` (table name upper-cased -> column names) is `nil` for a new store;
    /// for an existing one every expected table and column must be found, or `StoreError.schemaMismatch`.
    /// An existing store's join tables keep the names the store has (named after either end); a new store's are
    /// named after the end `ObjectModel.manyToManyEnds` puts first, unless `joinTablesNamedBy` names the other.
    package static func build(
        model: ObjectModel, storeEntities: [EntityDescription], numbers: [String: Int64],
        actualColumns: [String: [String]]?, path: String, configuration: String, joinTablesNamedBy: Set<String> = [],
        externalReferences: Bool = true, hiddenKeysMayBeMissing: Bool = false
    ) throws -> SQLiteSchema {
        let builder = SQLiteLayoutBuilder(model: model, numbers: numbers)
        var hiddenKeys: [String: SQLiteHiddenKey] = [:]
        var tables: [SQLiteTableLayout] = []
        var entities: [String: SQLiteEntityLayout] = [:]
        for root in roots(of: storeEntities, in: model) {
            var (table, columnsByEntity) = builder.table(root: root)
            var actual: [String: String]?  // upper-cased -> real spelling
            if let actualColumns {
                let candidates = [table.name] + (root.renamingIdentifier.map { [SQLiteNames.table(for: $0)] } ?? [])
                guard let found = candidates.first(where: { actualColumns[$0.uppercased()] != nil }),
                    let cols = actualColumns[found.uppercased()]
                else {
                    throw StoreError.schemaMismatch(
                        path: path, configuration: configuration,
                        reason: "table \(table.name) for entity \(root.name) is missing")
                }
                table.name = found
                actual = Dictionary(cols.map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
            }
            let tableName = table.name
            for name in table.entityNames where numbers[name] != nil {
                for end in builder.hiddenEnds(destination: name) {
                    guard let expected = columnsByEntity[name]?[SQLiteHiddenKey.property(end.key)] else { continue }
                    let column: String?
                    do {
                        column = try resolveHiddenColumn(
                            expected: expected, relationship: end.relationship.name, actual: actual, ordered: false, table: tableName,
                            endKey: end.key, path: path, configuration: configuration)
                    } catch where hiddenKeysMayBeMissing {
                        continue   // read-only, written before Switchyard kept the key: the relationship reads empty
                    }
                    guard let column else { continue }
                    var orderColumn: String?
                    if let expectedOrder = columnsByEntity[name]?[SQLiteHiddenKey.orderProperty(end.key)] {
                        orderColumn = try resolveHiddenColumn(
                            expected: expectedOrder, relationship: end.relationship.name, actual: actual, ordered: true, table: tableName,
                            endKey: end.key, path: path, configuration: configuration)
                    }
                    hiddenKeys[end.key] = SQLiteHiddenKey(destination: name, table: tableName, column: column, orderColumn: orderColumn)
                }
            }
            for name in table.entityNames {
                guard let entity = model.entity(named: name) else { continue }
                // Entities of the tree the store has no number for (not in Z_PRIMARYKEY) hold no rows here.
                guard numbers[name] != nil else { continue }
                entities[name] = try builder.entityLayout(
                    entity, table: tableName, columnsByEntity: columnsByEntity,
                    resolve: { expected, property, declaring in
                        try resolveColumn(
                            expected: expected, property: property, declaring: declaring, table: tableName,
                            actual: actual, path: path, configuration: configuration)
                    })
            }
            tables.append(table)
        }
        if !externalReferences {
            // A store written before Switchyard kept Core Data's external storage holds the bare bytes.
            for name in Array(entities.keys) {
                for i in entities[name]!.attributes.indices { entities[name]!.attributes[i].isExternal = false }
            }
        }
        var schema = SQLiteSchema(
            tables: tables, tableByRoot: Dictionary(uniqueKeysWithValues: tables.enumerated().map { ($1.rootName, $0) }),
            entities: entities,
            entityNamesByNumber: Dictionary(entities.values.map { ($0.number, $0.name) }, uniquingKeysWith: { a, _ in a }),
            tableEntityNumbers: Dictionary(grouping: entities.values, by: \.table).mapValues { $0.map(\.number).sorted() },
            projections: [:], exactProjections: [:])
        schema.hiddenKeys = hiddenKeys
        let roots = Set(tables.map(\.rootName))
        for (first, second) in model.manyToManyPairs(touching: storeEntities) {
            guard let a = model.entity(named: first.entityName), let b = model.entity(named: second.entityName),
                roots.contains(a.rootName), roots.contains(b.rootName)
            else { continue }
            var join = SQLiteJoinTable.expected(first: first, second: second, numbers: numbers, model: model)
            if let actualColumns {
                // A store numbered differently from the model may have named the table after the other end.
                let swapped = SQLiteJoinTable.expected(first: second, second: first, numbers: numbers, model: model)
                guard let found = join.resolved(in: actualColumns) ?? swapped.resolved(in: actualColumns) else {
                    throw StoreError.schemaMismatch(
                        path: path, configuration: configuration,
                        reason: "join table \(join.name) (columns \(join.firstColumn), \(join.secondColumn)) for many-to-many "
                            + "\(first.key) <-> \(second.key) is missing")
                }
                join = found
            } else if joinTablesNamedBy.contains(second.key), !joinTablesNamedBy.contains(first.key) {
                join = SQLiteJoinTable.expected(first: second, second: first, numbers: numbers, model: model)
            }
            schema.joinByEnd[first.key] = schema.joinTables.count
            schema.joinByEnd[second.key] = schema.joinTables.count
            schema.joinTables.append(join)
        }
        for layout in entities.values {
            schema.projections[layout.name] = schema.projection(for: layout, includesSubentities: true)
            schema.exactProjections[layout.name] = schema.projection(for: layout, includesSubentities: false)
        }
        return schema
    }

    /// The hidden-key columns (with their index) an existing store lacks: to-manys without inverse whose
    /// members' table is in the store, written by Switchyard before it kept them. Order columns are optional and
    /// not listed.
    package static func missingHiddenColumns(
        model: ObjectModel, storeEntities: [EntityDescription], numbers: [String: Int64], actualColumns: [String: [String]]
    ) -> [(table: String, column: String, index: SQLiteIndexSpec?)] {
        let builder = SQLiteLayoutBuilder(model: model, numbers: numbers)
        var missing: [(table: String, column: String, index: SQLiteIndexSpec?)] = []
        for root in roots(of: storeEntities, in: model) {
            let (table, columnsByEntity) = builder.table(root: root)
            guard let actual = actualColumns[table.name.uppercased()].map({ Set($0.map { $0.uppercased() }) }) else { continue }
            for name in table.entityNames where numbers[name] != nil {
                for end in builder.hiddenEnds(destination: name) {
                    guard let column = columnsByEntity[name]?[SQLiteHiddenKey.property(end.key)] else { continue }
                    let present = actual.contains(column.uppercased()) || actual.contains { key in
                        SQLiteHiddenKey.isColumn(key, of: end.relationship.name, ordered: false)
                    }
                    if !present {
                        missing.append((table.name, column, table.indexes.first { $0.terms.map(\.column) == [column] }))
                    }
                }
            }
        }
        return missing
    }

    /// The real hidden foreign-key (or, `ordered`, position) column of to-many without inverse `endKey`: the
    /// expected name, else the one `Z<digits><NAME>` (`Z_FOK_<digits><NAME>`) column, since real stores number
    /// entities differently. A missing foreign key is `schemaMismatch`; a missing position reads unordered (nil).
    private static func resolveHiddenColumn(
        expected: String, relationship: String, actual: [String: String]?, ordered: Bool, table: String, endKey: String,
        path: String, configuration: String
    ) throws -> String? {
        guard let actual else { return expected }
        if let real = actual[expected.uppercased()] { return real }
        if let real = SQLiteHiddenKey.existingColumn(of: relationship, ownerNumber: nil, ordered: ordered, among: actual.values) {
            return real
        }
        if ordered { return nil }
        throw StoreError.schemaMismatch(
            path: path, configuration: configuration,
            reason: "table \(table) has no column \(expected) holding the owner of to-many without inverse \(endKey)")
    }

    /// Finds the real column for an expected one: same name (any case), else the property's renaming
    /// identifier, else (for `Z<n>_<REL>`) any `Z<digits>_<REL>` column, since real stores number differently.
    private static func resolveColumn(
        expected: String, property: String, declaring: EntityDescription, table: String,
        actual: [String: String]?, path: String, configuration: String
    ) throws -> String? {
        let isEntityColumn = property.hasSuffix("\u{0}entity")
        guard let actual else { return expected.isEmpty ? nil : expected }
        // An order column is optional: without it the relationship reads in primary-key order.
        if property.hasSuffix("\u{0}order") { return actual[expected.uppercased()] }
        if !expected.isEmpty, let real = actual[expected.uppercased()] { return real }
        if isEntityColumn {
            let relationship = String(property.dropLast("\u{0}entity".count))
            let match = actual.keys.sorted().first { SQLiteNames.isEntityColumn($0, of: relationship, numberedAs: expected) }
            if let match { return actual[match] }
            if expected.isEmpty { return nil }
        } else {
            let renamed = declaring.attribute(named: property)?.renamingIdentifier
                ?? declaring.relationship(named: property)?.renamingIdentifier
            if let renamed, let real = actual[SQLiteNames.column(for: renamed).uppercased()] { return real }
        }
        let what = isEntityColumn ? "the entity column of relationship" : "property"
        let name = isEntityColumn ? String(property.dropLast("\u{0}entity".count)) : property
        throw StoreError.schemaMismatch(
            path: path, configuration: configuration,
            reason: "table \(table) has no column \(expected) for \(what) \(declaring.name).\(name)")
    }

    /// The column value of `value` for `attribute` of a row of `layout`; a value its type cannot hold is
    /// `StoreError.invalidValue` naming the store, entity, attribute and expected type.
    package func columnValue(
        _ value: AttributeValue, _ attribute: SQLiteAttributeMapping, of layout: SQLiteEntityLayout, path: String, configuration: String
    ) throws -> ColumnValue {
        guard let encoded = ColumnValue.encode(value, as: attribute.type) else {
            var expected = attribute.type.rawValue
            if let range = attribute.type.integerRange { expected += " in \(range.lowerBound)...\(range.upperBound)" }
            throw StoreError.invalidValue(
                path: path, configuration: configuration, entity: layout.name, attribute: attribute.name,
                value: "\(value) (\(value.kindName))", expected: expected)
        }
        return encoded
    }

    /// The foreign key and the destination's `Z_ENT` of a to-one of a row of `layout`; a reference must name the
    /// destination entity or one of its subentities in this store, or it is `StoreError.invalidValue`.
    package func columnValues(
        _ reference: RowReference?, _ relationship: SQLiteToOneMapping, of layout: SQLiteEntityLayout, model: ObjectModel,
        path: String, configuration: String
    ) throws -> (key: ColumnValue, entity: ColumnValue) {
        guard let reference else { return (.null, .null) }
        guard model.entity(reference.entityName, isKindOf: relationship.destination), let destination = entities[reference.entityName] else {
            throw StoreError.invalidValue(
                path: path, configuration: configuration, entity: layout.name, attribute: relationship.name, value: reference.description,
                expected: "a reference to \(relationship.destination) or a subentity in this store")
        }
        return (.integer(reference.primaryKey), .integer(destination.number))
    }

    /// The hidden foreign key of a link's relationship when it is a to-many without inverse (checking the member
    /// is of its destination); nil for any other relationship.
    package func hiddenKey(of link: RelationshipLink, model: ObjectModel, path: String, configuration: String) throws -> SQLiteHiddenKey? {
        guard let end = try link.endWithoutInverse(in: model, path: path, configuration: configuration) else { return nil }
        guard let hidden = hiddenKeys[end.key] else {
            throw StoreError.unknownProperty(
                path: path, configuration: configuration, entity: link.source.entityName,
                property: "\(end.key) (its members' table is not in this store)")
        }
        return hidden
    }

    /// `UPDATE` clearing a hidden foreign key (and its position) in the rows `condition` selects.
    package func hiddenClearSQL(_ hidden: SQLiteHiddenKey, where condition: String) -> String {
        let position = hidden.orderColumn.map { ", \(SQLiteNames.quote($0)) = NULL" } ?? ""
        return "UPDATE \(SQLiteNames.quote(hidden.table)) SET \(SQLiteNames.quote(hidden.column)) = NULL\(position) WHERE \(condition)"
    }

    /// The join table of a link's relationship seen from its source, and whether the relationship is its own
    /// inverse (then each link is kept both ways round, so either row finds the other through the same
    /// columns); `StoreError.unknownProperty` for a relationship without a join table.
    package func joinSide(of link: RelationshipLink, model: ObjectModel, path: String, configuration: String) throws -> (SQLiteJoinTable.Side, Bool) {
        guard let end = model.end(of: link.relationship, from: link.source.entityName), let index = joinByEnd[end.key] else {
            throw StoreError.unknownProperty(path: path, configuration: configuration, entity: link.source.entityName, property: link.relationship)
        }
        let join = joinTables[index]
        return (join.side(from: end.key), join.first.key == join.second.key)
    }

    /// Where an ordered to-many keeps its members' positions.
    package enum OrderColumns {
        /// `column` of `table`, on the row whose `sourceColumn` is the owner and `memberColumn` the member.
        case columns(table: String, column: String, sourceColumn: String, memberColumn: String)
        /// The store keeps no position for it (an existing Core Data store without the column).
        case notKept
        /// Not an ordered to-many this store holds.
        case unknown
    }

    /// Where ordered to-many `end` keeps its positions: the join table's `Z_FOK_` column, the hidden key's, or the
    /// members' `Z_FOK_` column beside their foreign key.
    package func orderColumns(of end: RelationshipEnd) -> OrderColumns {
        guard end.relationship.isOrdered else { return .unknown }
        if let side = join(end.key) {
            guard let column = side.orderColumn else { return .notKept }
            return .columns(table: side.table, column: column, sourceColumn: side.sourceColumn, memberColumn: side.memberColumn)
        }
        if let hidden = hiddenKeys[end.key] {
            guard let column = hidden.orderColumn else { return .notKept }
            return .columns(table: hidden.table, column: column, sourceColumn: hidden.column, memberColumn: "Z_PK")
        }
        if let inverse = end.relationship.inverseName, let destination = entities[end.relationship.destinationEntityName],
            let index = destination.toOneIndex[inverse]
        {
            let mapping = destination.toOnes[index]
            guard let column = mapping.orderColumn else { return .notKept }
            return .columns(table: table(of: destination).name, column: column, sourceColumn: mapping.column, memberColumn: "Z_PK")
        }
        return .unknown
    }

    /// `alias."Z_ENT" IN (...)` selecting `entity` (and its subentities), nil when every row of its table is one.
    package func entityFilter(_ entity: SQLiteEntityLayout, alias: String, includesSubentities: Bool) -> String? {
        let wanted = includesSubentities ? entity.familyNumbers : [entity.number]
        let inTable = tableEntityNumbers[entity.table] ?? []
        if inTable.allSatisfy(wanted.contains) { return nil }
        if wanted.count == 1 { return "\(alias).\"Z_ENT\" = \(wanted[0])" }
        return "\(alias).\"Z_ENT\" IN (\(wanted.sorted().map(String.init).joined(separator: ", ")))"
    }

    /// The members of to-many `end` for a list of sources, as one SELECT of (source key, member `Z_PK`, member
    /// `Z_ENT`) in the relationship's order: through the join table for a many-to-many, the hidden key for a
    /// to-many without inverse, the members' foreign key otherwise. `placeholders` are the parameters of the
    /// source keys (`?` or `$n`). Nil when the relationship is none of those (the caller reports it).
    package func membersSQL(of end: RelationshipEnd, destination: SQLiteEntityLayout, model: ObjectModel, placeholders: [String]) -> String? {
        let q = SQLiteNames.quote
        let destinationTable = q(table(of: destination).name)
        let from: String, sourceColumn: String
        var orderColumn: String?
        if let side = join(end.key) {
            from = "\(q(side.table)) AS j JOIN \(destinationTable) AS d ON d.\"Z_PK\" = j.\(q(side.memberColumn))"
            sourceColumn = "j.\(q(side.sourceColumn))"
            orderColumn = side.orderColumn.map { "j.\(q($0))" }
        } else if let hidden = hiddenKeys[end.key] {
            from = "\(destinationTable) AS d"
            sourceColumn = "d.\(q(hidden.column))"
            orderColumn = hidden.orderColumn.map { "d.\(q($0))" }
        } else if model.isInverseBackedToMany(end.relationship), let inverse = end.relationship.inverseName,
            let index = destination.toOneIndex[inverse]
        {
            let mapping = destination.toOnes[index]
            from = "\(destinationTable) AS d"
            sourceColumn = "d.\(q(mapping.column))"
            orderColumn = mapping.orderColumn.map { "d.\(q($0))" }
        } else {
            return nil
        }
        if !end.relationship.isOrdered { orderColumn = nil }
        let family = entityFilter(destination, alias: "d", includesSubentities: true).map { " AND " + $0 } ?? ""
        let order = orderColumn.map { "\($0) IS NULL, \($0), " } ?? ""
        return "SELECT \(sourceColumn), d.\"Z_PK\", d.\"Z_ENT\" FROM \(from) WHERE \(sourceColumn) IN (\(placeholders.joined(separator: ", ")))"
            + "\(family) ORDER BY \(sourceColumn), \(order)d.\"Z_PK\""
    }

    /// The projection for fetching `layout` with or without its subentities.
    func projection(for layout: SQLiteEntityLayout, includesSubentities: Bool) -> SQLiteProjection {
        let table = self.table(of: layout)
        let members = (includesSubentities ? layout.familyNumbers : [layout.number])
            .compactMap { entityNamesByNumber[$0].flatMap { entities[$0] } }
        var used: Set<String> = []
        for member in members {
            used.formUnion(member.attributes.map(\.column))
            used.formUnion(member.toOnes.flatMap { [$0.column] + ($0.entityColumn.map { [$0] } ?? []) })
        }
        // Table order where the table is ours; existing stores may have columns we did not predict the order of.
        var columns = table.columns.map(\.name).filter { used.contains($0) }
        columns += used.subtracting(columns).sorted()
        let position = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0 + 3) })
        var readers: [Int64: SQLiteProjection.Reader] = [:]
        // Every member column is in `position` by construction; compactMap keeps that an invariant, not a trap.
        for member in members {
            readers[member.number] = SQLiteProjection.Reader(
                entityName: member.name,
                attributes: member.attributes.compactMap { a in
                    position[a.column].map { .init(column: Int32($0), name: a.name, type: a.type, isExternal: a.isExternal) }
                },
                toOnes: member.toOnes.compactMap { r in
                    position[r.column].map {
                        .init(column: Int32($0), entityColumn: r.entityColumn.flatMap { position[$0] }.map(Int32.init),
                              name: r.name, destination: r.destination)
                    }
                })
        }
        let select = (["Z_PK", "Z_ENT", "Z_OPT"] + columns).map { "t0." + SQLiteNames.quote($0) }.joined(separator: ", ")
        return SQLiteProjection(columns: columns, selectList: select, readers: readers)
    }
}
