import Foundation
internal import GRDB

// MARK: - SQLiteRowDecoder

/// Turns the rows of a fetch statement into `StoreRow`s through a projection's precomputed readers.
///
/// Fetching is dominated by per-value overhead, so two things are avoided: GRDB's generic `Row` decoding (a
/// runtime metadata lookup per value; columns are read with the concrete `DatabaseValue(sqliteStatement:index:)`
/// instead), and hashing attribute names for every row: rows with the same set of non-NULL attributes share a
/// template dictionary, and each row's copy of it is filled through stored indexes.
struct SQLiteRowDecoder {
    let projection: SQLiteProjection
    let entityNames: [Int64: String]

    /// A template with every non-NULL attribute of one (entity, NULL pattern) and where each value goes.
    private struct Shape {
        var template: [String: AttributeValue]
        var slots: [(attribute: Int, index: Dictionary<String, AttributeValue>.Index)]
    }

    private struct ShapeKey: Hashable {
        var entity: Int64
        var mask: UInt64
    }

    private var shapes: [ShapeKey: Shape] = [:]
    private var last: (key: ShapeKey, shape: Shape)?
    /// A pattern seen once: a template pays off only from its second row (lookups fetch one row).
    private var seenOnce: ShapeKey?
    private var scratch: [AttributeValue] = []

    init(projection: SQLiteProjection, entityNames: [Int64: String]) {
        self.projection = projection
        self.entityNames = entityNames
    }

    /// Runs `statement` with `arguments` and decodes every row; rows of entities the model does not know are
    /// skipped.
    mutating func rows(of statement: Statement, arguments: [DatabaseValue]) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        let sqlite = statement.sqliteStatement
        if let (index, code) = statement.bindDirectly(arguments) {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind parameter \(index)", sql: statement.sql)
        }
        let cursor = try Row.fetchCursor(statement)
        var current: (number: Int64, reader: SQLiteProjection.Reader)?
        while try cursor.next() != nil {
            // Z_PK, Z_ENT, Z_OPT are integers in every Core Data row (a NULL reads as 0: no entity, no key,
            // version 0), so one column call each instead of a type probe plus a read.
            let entityNumber = Int64(sqliteStatement: sqlite, index: 1)
            let primaryKey = Int64(sqliteStatement: sqlite, index: 0)
            if current?.number != entityNumber {
                guard let reader = projection.readers[entityNumber] else { continue }
                current = (entityNumber, reader)
                if scratch.count < reader.attributes.count {
                    scratch = Array(repeating: .null, count: reader.attributes.count)
                }
            }
            guard let reader = current?.reader else { continue }
            let version = Int64(sqliteStatement: sqlite, index: 2)
            let values = readValues(sqlite, reader: reader, entity: entityNumber)
            var toOne: [String: RowReference] = [:]
            for relationship in reader.toOnes {
                guard case .int64(let key) = DatabaseValue(sqliteStatement: sqlite, index: relationship.column).storage
                else { continue }
                var destination = relationship.destination
                if let column = relationship.entityColumn,
                    case .int64(let number) = DatabaseValue(sqliteStatement: sqlite, index: column).storage,
                    let name = entityNames[number]
                {
                    destination = name
                }
                toOne[relationship.name] = RowReference(entityName: destination, primaryKey: key)
            }
            rows.append(StoreRow(
                entityName: reader.entityName, primaryKey: primaryKey, version: version, values: values, toOne: toOne))
        }
        return rows
    }

    private mutating func readValues(
        _ sqlite: SQLiteStatement, reader: SQLiteProjection.Reader, entity: Int64
    ) -> [String: AttributeValue] {
        let attributes = reader.attributes
        guard attributes.count <= 64 else {
            // Too wide for a NULL-pattern mask: plain insertion.
            var values = [String: AttributeValue](minimumCapacity: attributes.count)
            for attribute in attributes {
                let value = DatabaseValue(sqliteStatement: sqlite, index: attribute.column)
                if !value.isNull { values[attribute.name] = SQLiteValueCoding.decode(value, as: attribute.type) }
            }
            return values
        }
        var mask: UInt64 = 0
        for i in attributes.indices {
            let value = DatabaseValue(sqliteStatement: sqlite, index: attributes[i].column)
            if value.isNull { continue }
            scratch[i] = SQLiteValueCoding.decode(value, as: attributes[i].type)
            mask |= 1 << UInt64(i)
        }
        if mask == 0 { return [:] }
        let key = ShapeKey(entity: entity, mask: mask)
        if last?.key != key, shapes[key] == nil, seenOnce != key {
            seenOnce = key
            var values = [String: AttributeValue](minimumCapacity: mask.nonzeroBitCount)
            for i in attributes.indices where mask & (1 << UInt64(i)) != 0 { values[attributes[i].name] = scratch[i] }
            return values
        }
        let shape = self.shape(key, attributes: attributes)
        var values = shape.template
        for slot in shape.slots {
            values.values[slot.index] = scratch[slot.attribute]
        }
        return values
    }

    private mutating func shape(_ key: ShapeKey, attributes: [SQLiteProjection.Reader.Attribute]) -> Shape {
        if let last, last.key == key { return last.shape }
        let shape: Shape
        if let known = shapes[key] {
            shape = known
        } else {
            var template = [String: AttributeValue](minimumCapacity: key.mask.nonzeroBitCount)
            let present = attributes.indices.filter { key.mask & (1 << UInt64($0)) != 0 }
            for i in present { template[attributes[i].name] = .null }
            // Indexes stay valid in every copy of the template: a copy keeps the storage layout.
            let slots = present.compactMap { i in template.index(forKey: attributes[i].name).map { (i, $0) } }
            shape = Shape(template: template, slots: slots)
            shapes[key] = shape
        }
        last = (key, shape)
        return shape
    }
}
