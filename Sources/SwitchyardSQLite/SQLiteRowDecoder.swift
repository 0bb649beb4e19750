import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - SQLiteRowDecoder

/// Turns the rows of a fetch statement into `StoreRow`s through a projection's precomputed readers.
///
/// Fetching is dominated by per-value overhead, so two things are avoided: GRDB's generic `Row` decoding (a
/// runtime metadata lookup per value; columns are read with the concrete `DatabaseValue(sqliteStatement:index:)`
/// instead), and hashing attribute names for every row: values go into slots ordered by the reader's
/// `RowLayout`, in blocks shared by many rows (`RowArena`).
package struct SQLiteRowDecoder {
    package let projection: SQLiteProjection
    package let entityNames: [Int64: String]
    /// Where external binary data files are read from.
    package let externalData: SQLiteExternalData?
    private let arena = RowArena()

    package init(projection: SQLiteProjection, entityNames: [Int64: String], externalData: SQLiteExternalData? = nil) {
        self.projection = projection
        self.entityNames = entityNames
        self.externalData = externalData
    }

    /// Runs `statement` with `arguments` and decodes every row; rows of entities the model does not know are
    /// skipped.
    mutating func rows(of statement: Statement, arguments: [DatabaseValue]) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try forEachRow(of: statement, arguments: arguments) { rows.append($0) }
        return rows
    }

    /// Runs `statement` with `arguments` and hands each decoded row to `body` as it is read.
    mutating func forEachRow(of statement: Statement, arguments: [DatabaseValue], _ body: (consuming StoreRow) throws -> Void) throws {
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
            }
            guard let reader = current?.reader else { continue }
            let version = Int64(sqliteStatement: sqlite, index: 2)
            let values = try readValues(sqlite, reader: reader, primaryKey: primaryKey)
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
            try body(StoreRow(
                entityName: reader.entityName, primaryKey: primaryKey, version: version, values: values, toOne: toOne))
        }
    }

    private func readValues(_ sqlite: SQLiteStatement, reader: SQLiteProjection.Reader, primaryKey: Int64) throws -> RowValues {
        let attributes = reader.attributes
        let (storage, row) = arena.allocate(reader.rowLayout.slots)
        for i in attributes.indices {
            let value = DatabaseValue(sqliteStatement: sqlite, index: attributes[i].column)
            if !value.isNull {
                var decoded = SQLiteValueCoding.decode(value, as: attributes[i].type)
                if attributes[i].isExternal, let externalData, case .binary(let bytes) = decoded {
                    decoded = .binary(try externalData.decode(bytes, entity: reader.entityName, attribute: attributes[i].name, primaryKey: primaryKey))
                }
                storage[row, i] = decoded
                arena.noteStored(decoded)
            }
        }
        return RowValues(layout: reader.rowLayout, storage: storage, row: row)
    }
}
