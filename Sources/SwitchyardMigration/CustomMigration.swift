// MARK: - CustomMigration
import SwitchyardContext

/// A migration step written in code, run over the old store's rows a batch at a time into a new store that
/// replaces the old one when the step has finished (so memory stays bounded and a kill leaves the old store).
///
/// By default every entity of the new version is filled from the old entity it continues: the one of the same name
/// and renaming identifier unless the name was renamed away, else the one its `renamingIdentifier` names, else the
/// one of its name, else the one carrying the same identifier (each old entity continued at most once; `storesplit`
/// matches the same way): primary keys, `Z_OPT`, the attributes it continues (matched the same way) whose values
/// fit the new type, to-one relationships, many-to-many links and ordered positions. A `transform` runs after that
/// default copy for each row and may change any value, re-point relationships, insert objects of other entities,
/// or drop the row. Entities of the new version with no old counterpart and no transform start empty.
///
/// ```swift
/// var step = CustomMigration(batchSize: 5_000)
/// step.transform("Message") { old, new in
///     try new.set("length", Int64(try old.value("text", as: String.self)?.count ?? 0))
///     if try old.value("isSpam", as: Bool.self) == true { new.drop() }
/// }
/// step.didMigrate = { context in
///     // Runs on the new version before it replaces the old store: fix-ups through the object API.
/// }
/// ```
public struct CustomMigration: Sendable {
    /// Rows read, transformed and written per transaction.
    public var batchSize: Int
    /// Runs before the step on the store at the old version (its saves are kept even if the step fails, so
    /// it must be idempotent, as SwiftData's `willMigrate` must).
    public var willMigrate: (@Sendable (ObjectContext) throws -> Void)?
    /// Runs after the rows are copied, on the new version, before it replaces the old store; a throw
    /// abandons the step and leaves the old store.
    public var didMigrate: (@Sendable (ObjectContext) throws -> Void)?
    /// Target entity name -> where its rows come from and the code run on each.
    package private(set) var transforms: [String: Transform] = [:]

    /// What fills one entity of the new version.
    package struct Transform: Sendable {
        /// The old entity whose rows are read; nil means the default (the one the entity continues, as the type's
        /// documentation says).
        package var sourceEntity: String?
        package var body: MigrationTransform
    }

    /// A step that copies in batches of `batchSize` rows.
    public init(batchSize: Int = 1_000) {
        self.batchSize = max(1, batchSize)
    }

    /// Runs `body` for every row that fills `entityName` of the new version, read from the old entity
    /// `sourceEntity` (by default the one it continues, as `CustomMigration`'s documentation says).
    /// `body` sees the old row and the new one already filled by the default copy.
    public mutating func transform(_ entityName: String, from sourceEntity: String? = nil, _ body: @escaping MigrationTransform) {
        transforms[entityName] = Transform(sourceEntity: sourceEntity, body: body)
    }

    /// `transform(_:from:_:)` for the entity of a typed `EntityObject` of the new version: the transform can
    /// write through its key paths (`try new.set(\Person.firstName, first)`).
    public mutating func transform<E: EntityObject>(_ type: E.Type, from sourceEntity: String? = nil, _ body: @escaping MigrationTransform) {
        transform(E.entityName, from: sourceEntity, body)
    }
}

/// The code a custom step runs for one row: it reads `old` and writes `new`.
public typealias MigrationTransform = @Sendable (_ old: MigrationSourceObject, _ new: MigrationTargetObject) throws -> Void
