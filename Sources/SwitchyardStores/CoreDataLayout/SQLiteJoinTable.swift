import Foundation
import SwitchyardModel

// MARK: - SQLiteJoinTable

/// A many-to-many relationship's join table, as Core Data lays it out: `Z_<n><REL>`, named after the pair's
/// first end (`ObjectModel.manyToManyEnds`: entity number `n` declaring relationship `REL`), with one column per
/// end, `Z_<m><NAME>` holding the primary key of the destination (number `m`) of the relationship `NAME`, and
/// for an ordered end a `Z_FOK_<m><NAME>` column holding each member's position in that end's list.
///
/// ```
/// Photo(1).tags <<->> Tag(2).photos:
/// CREATE TABLE Z_1TAGS ( Z_1PHOTOS INTEGER, Z_2TAGS INTEGER, PRIMARY KEY (Z_1PHOTOS, Z_2TAGS) )
/// CREATE INDEX Z_1TAGS_Z_2TAGS_INDEX ON Z_1TAGS (Z_2TAGS, Z_1PHOTOS)
/// ```
package struct SQLiteJoinTable: Sendable, Hashable {
    package var name: String
    package var first: RelationshipEnd
    package var second: RelationshipEnd
    /// Holds the primary key of the first end's row (the second end's destination).
    package var firstColumn: String
    /// Holds the primary key of the second end's row (the first end's destination).
    package var secondColumn: String
    /// The position of the second-end row in the first end's ordered list (`Z_FOK_` + `secondColumn` without `Z_`).
    package var firstOrderColumn: String?
    /// The position of the first-end row in the second end's ordered list.
    package var secondOrderColumn: String?

    /// The join seen from one end: which column holds the source row, which the member, which the order.
    package struct Side: Sendable, Hashable {
        package var table: String
        package var sourceColumn: String
        package var memberColumn: String
        package var orderColumn: String?
        /// The member entity (the relationship's destination).
        package var destination: String
    }

    /// The table seen from `end` (one of its two ends).
    package func side(from endKey: String) -> Side {
        endKey == first.key
            ? Side(table: name, sourceColumn: firstColumn, memberColumn: secondColumn, orderColumn: firstOrderColumn,
                   destination: first.relationship.destinationEntityName)
            : Side(table: name, sourceColumn: secondColumn, memberColumn: firstColumn, orderColumn: secondOrderColumn,
                   destination: second.relationship.destinationEntityName)
    }

    package var createSQL: String {
        let columns = [firstColumn, secondColumn] + [firstOrderColumn, secondOrderColumn].compactMap { $0 }
        return "CREATE TABLE \(SQLiteNames.ddl(name)) ( " + columns.map { "\(SQLiteNames.ddl($0)) INTEGER" }.joined(separator: ", ")
            + ", PRIMARY KEY (\(SQLiteNames.ddl(firstColumn)), \(SQLiteNames.ddl(secondColumn))) )"
    }

    /// The reverse index Core Data adds, so the second end finds its members without a scan.
    package var indexSQL: String {
        "CREATE INDEX \(SQLiteNames.ddl("\(name)_\(secondColumn)_INDEX")) ON \(SQLiteNames.ddl(name)) "
            + "(\(SQLiteNames.ddl(secondColumn)), \(SQLiteNames.ddl(firstColumn)))"
    }

    /// The join table Core Data would create for a pair, given the store's entity numbers.
    package static func expected(first: RelationshipEnd, second: RelationshipEnd, numbers: [String: Int64], model: ObjectModel) -> SQLiteJoinTable {
        func number(_ entity: String) -> Int64 { numbers[entity] ?? Int64(model.entity(named: entity)?.entityNumber ?? 0) }
        let table = "Z_\(number(first.entityName))\(first.relationship.name.uppercased())"
        let firstColumn = "Z_\(number(second.relationship.destinationEntityName))\(second.relationship.name.uppercased())"
        var secondColumn = "Z_\(number(first.relationship.destinationEntityName))\(first.relationship.name.uppercased())"
        // A relationship that is its own inverse would name both columns alike: Core Data suffixes the second.
        if secondColumn == firstColumn { secondColumn += "1" }
        return SQLiteJoinTable(
            name: table, first: first, second: second, firstColumn: firstColumn, secondColumn: secondColumn,
            firstOrderColumn: first.relationship.isOrdered ? "Z_FOK_" + secondColumn.dropFirst(2) : nil,
            secondOrderColumn: second.relationship.isOrdered ? "Z_FOK_" + firstColumn.dropFirst(2) : nil)
    }

    /// `expected` matched against an existing store's tables: names compare case-insensitively, and a column may
    /// carry a numeric suffix Core Data added to keep names unique. `nil` when the table is missing.
    package func resolved(in actual: [String: [String]]) -> SQLiteJoinTable? {
        guard let columns = actual[name.uppercased()] else { return nil }
        func find(_ expected: String?) -> String? {
            guard let expected else { return nil }
            let upper = expected.uppercased()
            return columns.first { $0.uppercased() == upper }
                ?? columns.first { c in
                    let u = c.uppercased()
                    return u.hasPrefix(upper) && !u.dropFirst(upper.count).isEmpty && u.dropFirst(upper.count).allSatisfy(\.isNumber)
                }
        }
        guard let a = find(firstColumn), let b = find(secondColumn) else { return nil }
        var copy = self
        (copy.firstColumn, copy.secondColumn) = (a, b)
        copy.firstOrderColumn = find(firstOrderColumn)
        copy.secondOrderColumn = find(secondOrderColumn)
        return copy
    }
}
