import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - SQLite-to-SQLite bulk copy

extension SQLiteStore {
    /// Copies the rows of `spec.sourceEntity` from `source` into this store without decoding them: the source
    /// file is attached read-only (WAL honoured) to the writer connection and each batch is one
    /// `INSERT INTO ... SELECT ... WHERE Z_PK > ? AND Z_PK <= ?` inside one transaction per entity, so memory
    /// stays bounded and the speed is SQLite's own. Primary keys and `Z_OPT` are kept; `Z_ENT` becomes this store's number. Returns
    /// the number of rows copied.
    package func copyRows(
        _ spec: BulkCopySpec, from source: SQLiteStore, batchSize: Int, progress: (Int) throws -> Void
    ) throws -> Int {
        try checkWritable("copy rows")
        let target = try servedLayout(spec.targetEntity)
        guard let from = source.schema.entities[spec.sourceEntity] else {
            throw StoreError.entityNotInStore(path: source.displayPath, configuration: source.configurationName, entity: spec.sourceEntity)
        }
        let alias = "switchyard_source"
        let sourceTable = "\(alias).\(SQLiteNames.quote(source.schema.table(of: from).name))"
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var expressions = ["t.\"Z_PK\"", String(target.number), "t.\"Z_OPT\""]
        var arguments: [DatabaseValue] = []
        func sourceColumn(_ attribute: String) throws -> String {
            guard let index = from.attributeIndex[attribute] else {
                throw StoreError.unknownProperty(path: source.displayPath, configuration: configurationName, entity: from.name, property: attribute)
            }
            return "t." + SQLiteNames.quote(from.attributes[index].column)
        }
        func sourceToOne(_ relationship: String) throws -> SQLiteToOneMapping {
            guard let index = from.toOneIndex[relationship] else {
                throw StoreError.unknownProperty(path: source.displayPath, configuration: configurationName, entity: from.name, property: relationship)
            }
            return from.toOnes[index]
        }
        for (name, value) in spec.attributes {
            guard let index = target.attributeIndex[name] else {
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: target.name, property: name)
            }
            let mapping = target.attributes[index]
            columns.append(mapping.column)
            switch value {
            case .attribute(let attribute):
                expressions.append(try sourceColumn(attribute))
            case .constant(let constant):
                guard let encoded = SQLiteValueCoding.encode(constant, as: mapping.type) else {
                    throw StoreError.invalidValue(
                        path: displayPath, configuration: configurationName, entity: target.name, attribute: name, value: "\(constant)", expected: mapping.type.rawValue)
                }
                expressions.append("?")
                arguments.append(encoded)
            case .relatedKey(let relationship):
                expressions.append("t." + SQLiteNames.quote(try sourceToOne(relationship).column))
            case .relatedAttribute(let relationship, let attribute):
                let toOne = try sourceToOne(relationship)
                guard let related = source.schema.entities[toOne.destination],
                    let index = related.attributeIndex[attribute]
                else {
                    throw StoreError.unknownProperty(path: source.displayPath, configuration: configurationName, entity: toOne.destination, property: attribute)
                }
                let table = "\(alias).\(SQLiteNames.quote(source.schema.table(of: related).name))"
                expressions.append(
                    "(SELECT r.\(SQLiteNames.quote(related.attributes[index].column)) FROM \(table) AS r "
                        + "WHERE r.\"Z_PK\" = t.\(SQLiteNames.quote(toOne.column)))")
            }
        }
        for (name, sourceName) in spec.toOnes {
            guard let index = target.toOneIndex[name] else {
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: target.name, property: name)
            }
            let mapping = target.toOnes[index]
            let old = try sourceToOne(sourceName)
            let key = "t." + SQLiteNames.quote(old.column)
            columns.append(mapping.column)
            expressions.append(key)
            guard let entityColumn = mapping.entityColumn else { continue }
            // The destination's Z_ENT, renumbered from the source's numbering to this store's.
            let sourceNumber = old.entityColumn.map { "t." + SQLiteNames.quote($0) }
                ?? String(source.schema.entities[old.destination]?.number ?? 0)
            var cases = ""
            for (number, name) in source.schema.entityNamesByNumber.sorted(by: { $0.key < $1.key }) {
                guard let targetName = spec.entityNames[name], let layout = schema.entities[targetName] else { continue }
                cases += " WHEN \(number) THEN \(layout.number)"
            }
            columns.append(entityColumn)
            expressions.append("CASE WHEN \(key) IS NULL THEN NULL ELSE (CASE \(sourceNumber)\(cases) END) END")
        }
        let insert = "INSERT INTO main.\(SQLiteNames.quote(schema.table(of: target).name)) "
            + "(\(columns.map(SQLiteNames.quote).joined(separator: ", "))) SELECT \(expressions.joined(separator: ", ")) "
            + "FROM \(sourceTable) AS t WHERE t.\"Z_ENT\" = ? AND t.\"Z_PK\" > ? AND t.\"Z_PK\" <= ?"
        // Batches are ranges of primary keys, not of rows: finding row-count boundaries (`LIMIT 1 OFFSET n`)
        // read the whole table a second time. An empty range (a gap in the keys) jumps to the next key.
        let nextKey = "SELECT MIN(t.\"Z_PK\") FROM \(sourceTable) AS t WHERE t.\"Z_ENT\" = ? AND t.\"Z_PK\" > ?"
        let lastKey = "SELECT MAX(t.\"Z_PK\") FROM \(sourceTable) AS t WHERE t.\"Z_ENT\" = ?"
        let attachURI = SQLiteStore.readOnlyURI(path: source.location.path, isWAL: source.isWAL)
        do {
            return try pool.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS \(alias)", arguments: [attachURI])
                defer { try? db.execute(sql: "DETACH DATABASE \(alias)") }
                // The output is a temporary file renamed into place only once complete and verified, so a batch
                // need not reach the disk when it commits (an fsync per batch cost more than the copy itself).
                // Before returning, the old setting is back and a checkpoint writes and syncs everything.
                let synchronous = try Int.fetchOne(db, sql: "PRAGMA main.synchronous") ?? 2
                try db.execute(sql: "PRAGMA main.synchronous = OFF")
                defer { try? db.execute(sql: "PRAGMA main.synchronous = \(synchronous)") }
                var copied = 0
                // One transaction for the entity: committing each batch rewrote every index page the batch
                // touched, which made large copies slow down as the indexes grew. Batches still bound each
                // statement's work and report progress; SQLite spills dirty pages to the WAL, not to memory.
                let table = schema.table(of: target).name
                try db.inTransaction(.immediate) {
                    // Into an empty table, the secondary indexes are built once after the copy (a sort) instead
                    // of row by row: inserting into indexes on scattered keys thrashed the page cache and made
                    // large copies several times slower than the copy itself.
                    let isEmpty = try Int64.fetchOne(db, sql: "SELECT 1 FROM main.\(SQLiteNames.quote(table)) LIMIT 1") == nil
                    let indexes: [(name: String, sql: String)] = isEmpty ? try Row.fetchAll(db, sql: """
                        SELECT name, sql FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL
                        """, arguments: [table]).map { ($0["name"], $0["sql"]) } : []
                    for index in indexes { try db.execute(sql: "DROP INDEX main.\(SQLiteNames.quote(index.name))") }
                    let step = Int64(max(1, batchSize))
                    if let last = try Int64.fetchOne(db, sql: lastKey, arguments: [from.number]),
                        let first = try Int64.fetchOne(db, sql: nextKey, arguments: [from.number, Int64.min])
                    {
                        var low = first - 1
                        while low < last {
                            let high = low >= last - step ? last : low + step
                            try db.execute(sql: insert, arguments: StatementArguments(arguments + [from.number.databaseValue, low.databaseValue, high.databaseValue]))
                            let inserted = db.changesCount
                            copied += inserted
                            try progress(copied)
                            low = high
                            if inserted == 0, low < last {
                                guard let next = try Int64.fetchOne(db, sql: nextKey, arguments: [from.number, low]) else { break }
                                low = next - 1
                            }
                        }
                    }
                    for index in indexes { try db.execute(sql: index.sql) }
                    return .commit
                }
                try db.execute(sql: "PRAGMA main.synchronous = \(synchronous)")
                try db.execute(sql: "PRAGMA main.wal_checkpoint(TRUNCATE)")
                return copied
            }
        } catch {
            throw mapError(error)
        }
    }

    /// Whether the file's header says WAL (decides how a read-only attach opens it).
    package var isWAL: Bool {
        guard let handle = FileHandle(forReadingAtPath: location.path) else { return false }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 20)) ?? Data())
        return header.count == 20 && header[18] == 2 && header[19] == 2
    }
}
