import SwitchyardModel

// MARK: - BatchWritingStore

/// A store that can change or delete every row a request matches with one statement, without reading the
/// rows first (SQLite's `UPDATE ... WHERE` / `DELETE ... WHERE`). The coordinator's batch operations use it where
/// it applies and read the rows otherwise.
package protocol BatchWritingStore: PersistentStore {
    /// Sets `values` (attribute name -> value, already checked against the model) on every row `request`
    /// matches, incrementing each row's `Z_OPT`, in one write transaction: how many rows changed, and which
    /// (only when `naming`, for save observers). Nil when this store cannot do it in one statement for these
    /// values (the caller then updates row by row).
    func batchUpdate(_ request: StoreFetchRequest, values: [String: AttributeValue], naming: Bool) throws -> (count: Int, rows: [RowReference])?
    /// Deletes every row `request` matches in one write transaction: how many, and which (only when `naming`).
    /// Only for entities no relationship touches (the caller applies delete rules otherwise). Nil when this
    /// store cannot do it in one statement.
    func batchDelete(_ request: StoreFetchRequest, naming: Bool) throws -> (count: Int, rows: [RowReference])?
}
