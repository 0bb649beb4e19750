import Foundation

// MARK: - ConstrainedValueHandover

/// How the SQL stores save updates that pass values of a uniqueness constraint between rows (swapped, rotated,
/// handed along a chain) in one save: a unique index checks each row as it is written, so the first row to take
/// another's value would collide with it although no two rows share a value once the save is done. Where two or
/// more updates of one table write columns of its constraints, those columns are first set to NULL in their
/// rows (NULLs never collide in a unique index, and Core Data's columns allow them); the updates then write
/// every value, and rows that do end up sharing one still fail there.
package enum ConstrainedValueHandover {
    /// The indices of `updates` (each: its table and the constrained columns it writes) whose columns are set to
    /// NULL before any update is written.
    package static func updatesToClear(_ updates: [(table: String, constrained: [String])]) -> [Int] {
        var perTable: [String: Int] = [:]
        for update in updates where !update.constrained.isEmpty { perTable[update.table, default: 0] += 1 }
        guard perTable.values.contains(where: { $0 > 1 }) else { return [] }
        return updates.indices.filter { !updates[$0].constrained.isEmpty && perTable[updates[$0].table, default: 0] > 1 }
    }
}

extension SQLiteTableLayout {
    /// The columns among `columns` that one of the table's uniqueness constraints covers.
    package func constrainedColumns(among columns: [String]) -> [String] {
        guard !uniqueConstraints.isEmpty else { return [] }
        // Compared as SQLite names compare (a legacy file may spell a column in another case).
        return columns.filter { column in
            uniqueConstraints.contains { $0.columns.contains { $0.caseInsensitiveCompare(column) == .orderedSame } }
        }
    }
}
