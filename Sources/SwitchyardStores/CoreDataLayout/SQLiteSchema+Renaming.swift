import Foundation
import SwitchyardModel

// MARK: - Renaming identifiers

extension SQLiteSchema {
    /// Every table and column name the schema uses.
    package var identifiers: Set<String> {
        var names: Set<String> = []
        for table in tables {
            names.insert(table.name)
            names.formUnion(table.columns.map(\.name))
        }
        for join in joinTables {
            names.formUnion([join.name, join.firstColumn, join.secondColumn] + [join.firstOrderColumn, join.secondOrderColumn].compactMap { $0 })
        }
        for hidden in hiddenKeys.values { names.formUnion([hidden.column] + (hidden.orderColumn.map { [$0] } ?? [])) }
        return names
    }

    /// The schema with every table, column and index name passed through `rename`: for a database whose
    /// identifiers are shorter than Core Data's longest names (PostgreSQL keeps 63 bytes), so long names are
    /// shortened the same way wherever the store spells them.
    package func renamingIdentifiers(_ rename: (String) -> String) -> SQLiteSchema {
        var copy = self
        copy.tables = tables.map { table in
            var t = table
            t.name = rename(table.name)
            t.columns = table.columns.map { SQLiteColumnSpec(name: rename($0.name), sqlType: $0.sqlType) }
            t.indexes = table.indexes.map { index in
                var i = index
                i.name = rename(index.name)
                i.table = rename(index.table)
                i.terms = index.terms.map { SQLiteIndexSpec.Term(column: rename($0.column), order: $0.order) }
                return i
            }
            t.uniqueConstraints = table.uniqueConstraints.map { c in
                SQLiteUniqueConstraint(entity: c.entity, properties: c.properties, columns: c.columns.map(rename))
            }
            return t
        }
        copy.entities = entities.mapValues { layout in
            var l = layout
            l.table = rename(layout.table)
            l.attributes = layout.attributes.map { a in
                var m = a
                m.column = rename(a.column)
                return m
            }
            l.toOnes = layout.toOnes.map { r in
                var m = r
                m.column = rename(r.column)
                m.entityColumn = r.entityColumn.map(rename)
                m.orderColumn = r.orderColumn.map(rename)
                return m
            }
            return l
        }
        copy.tableEntityNumbers = Dictionary(tableEntityNumbers.map { (rename($0.key), $0.value) }, uniquingKeysWith: { a, b in a + b })
        copy.joinTables = joinTables.map { join in
            var j = join
            j.name = rename(join.name)
            j.firstColumn = rename(join.firstColumn)
            j.secondColumn = rename(join.secondColumn)
            j.firstOrderColumn = join.firstOrderColumn.map(rename)
            j.secondOrderColumn = join.secondOrderColumn.map(rename)
            return j
        }
        copy.hiddenKeys = hiddenKeys.mapValues { hidden in
            SQLiteHiddenKey(
                destination: hidden.destination, table: rename(hidden.table), column: rename(hidden.column),
                orderColumn: hidden.orderColumn.map(rename))
        }
        for layout in copy.entities.values {
            copy.projections[layout.name] = copy.projection(for: layout, includesSubentities: true)
            copy.exactProjections[layout.name] = copy.projection(for: layout, includesSubentities: false)
        }
        return copy
    }
}
