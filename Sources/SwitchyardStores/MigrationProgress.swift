import Foundation
import SwitchyardModel

// MARK: - MigrationProgress

/// One step of an in-place migration: `done` of `total` rows of `entity` rewritten in the store at `path`.
public struct MigrationProgress: Sendable, Hashable {
    /// The store being migrated.
    public var path: String
    /// The entity whose rows are being rewritten (or deleted, for a removed entity).
    public var entity: String
    /// Rows of `entity` handled so far.
    public var done: Int
    /// Rows of `entity` to handle.
    public var total: Int

    /// Creates a progress step.
    public init(path: String, entity: String, done: Int, total: Int) {
        self.path = path
        self.entity = entity
        self.done = done
        self.total = total
    }
}

/// Receives migration progress on the thread that migrates, once per batch; keep it short.
///
/// Throwing from it (for example `CancellationError` when the caller was cancelled) stops the migration: its
/// transaction is rolled back, the store is left exactly as it was, and opening the store fails with that error.
public typealias MigrationProgressHandler = @Sendable (MigrationProgress) throws -> Void

// MARK: - StoreMigration

/// What the backends share when a store's stored model differs from the one it is opened with.
package enum StoreMigration {
    /// Rows rewritten per batch: bounds the memory a batch holds and sets the progress granularity.
    package static let batchSize = 2_000

    /// The report for a store of `configuration`, or nil when nothing needs deciding: the stored version hashes
    /// equal the model's (the fast path, which never reads the model cache), or the store has no model cache
    /// (then the table layout decides when the store opens).
    package static func report(
        storedHashes: [String: Data], storedModel: () throws -> ObjectModel?, model: ObjectModel, configuration: String
    ) throws -> CompatibilityReport? {
        if storedHashes == model.versionHashes { return nil }
        guard let old = try storedModel() else { return nil }
        return ModelDiff.compare(from: old, to: model, configuration: configuration)
    }

    /// The stored model and the report when the store must be migrated to `model`; nil when nothing needs
    /// migrating (same hashes, no readable model cache, or only compatible changes);
    /// `StoreError.incompatibleModel` when a change cannot be inferred.
    package static func pendingMigration(
        storedHashes: [String: Data], storedModel: () throws -> ObjectModel?, model: ObjectModel, configuration: String,
        path: String
    ) throws -> (old: ObjectModel, report: CompatibilityReport)? {
        var old: ObjectModel?
        let report = try report(storedHashes: storedHashes, storedModel: {
            old = try storedModel()
            return old
        }, model: model, configuration: configuration)
        guard let report, let old else { return nil }
        switch report.verdict {
        case .identical, .compatible:
            return nil
        case .incompatible:
            throw StoreError.incompatibleModel(path: path, configuration: configuration, report: report)
        case .migratable:
            return (old, report)
        }
    }

    /// Why a read-only store cannot be read through `model`: `model` would migrate how an entity's rows are
    /// stored in a way that reading the old rows through it gets wrong (an entity added — its table or
    /// entity number is not there yet — or renamed, a property renamed, added — its default is written by the
    /// migration —, retyped, made required or pointed elsewhere, a to-many whose to-one inverse is added or
    /// removed),
    /// which a store that may not be written cannot have had done, as in Core Data. Nil otherwise: a read-only
    /// open with another model is allowed where it reads the rows as they are (a tool's model, an older app
    /// version's, one with fewer entities or properties).
    package static func readOnlyMigrationReason(
        storedHashes: [String: Data], storedModel: () throws -> ObjectModel?, model: ObjectModel, configuration: String, path: String
    ) -> String? {
        guard storedHashes != model.versionHashes, let old = try? storedModel() else { return nil }
        let misread: Set<PropertyChange.Kind> = [.added, .renamed, .typeChanged, .becameRequired, .toManyBecameToOne, .destinationChanged]
        let report = ModelDiff.compare(from: old, to: model, configuration: configuration)
        // A to-many whose inverse the migration adds or removes reads its members where they are not yet.
        let moved = Set(inverseMoves(report: report, old: old, new: model).map(\.end.entityName))
        let changed = report.entities.filter { entity in
            entity.kind == .renamed || entity.kind == .added || moved.contains(entity.name)
                || (entity.kind == .changed && entity.properties.contains { misread.contains($0.kind) })
        }.map(\.name)
        guard !changed.isEmpty else { return nil }
        return readOnlyRefusal(changed: changed, migratable: report.verdict != .incompatible)
    }

    /// How every backend words the refusal of a read-only open whose model changed these entities: "open it
    /// writable once" where a migration can be run, not where none infers the change.
    package static func readOnlyRefusal(changed: [String], migratable: Bool) -> String {
        let entities = "(entities changed: \(changed.joined(separator: ", ")))"
        guard migratable else {
            return "the store was written with another model \(entities) that this one cannot migrate, and is opened read-only"
        }
        return "the store was written with another model \(entities) and is opened read-only: open it writable once to migrate it"
    }

    /// Why a store cannot be opened with a model whose uniqueness constraint its rows break (a constraint a new
    /// model version added): every backend says it the same way.
    package static func duplicatesReason(entity: String, properties: [String], values: [String]) -> String {
        "the model's uniqueness constraint on \(entity)(\(properties.joined(separator: ", "))) does not hold for the stored rows: "
            + "(\(values.joined(separator: ", "))) is in more than one row; remove the duplicates (opening the store with its "
            + "previous model), then open it again. The store was not changed"
    }

    /// The metadata after a migration: the new model's hashes and identifiers, the UUID and app keys kept.
    package static func migratedMetadata(_ old: StoreMetadata, model: ObjectModel) -> StoreMetadata {
        var metadata = old
        metadata.versionHashes = model.versionHashes
        metadata.versionIdentifiers = model.versionIdentifiers
        return metadata
    }

    /// The store-side name of a property: its old name when the report says it was renamed.
    package static func oldPropertyNames(_ change: EntityChange) -> [String: String] {
        var names: [String: String] = [:]
        for p in change.properties where p.kind == .renamed { if let old = p.oldName { names[p.name] = old } }
        return names
    }

    /// The old model's end that the new relationship end `end` was (its entity and relationship possibly
    /// renamed, its kind possibly changed); nil for an added relationship.
    package static func formerEnd(of end: RelationshipEnd, report: CompatibilityReport, old: ObjectModel) -> RelationshipEnd? {
        let change = report.entities.first { $0.name == end.entityName && $0.kind != .added }
        guard change != nil || old.entity(named: end.entityName) != nil else { return nil }
        let entity = change?.oldName ?? end.entityName
        let relationship = change.flatMap { oldPropertyNames($0)[end.relationship.name] } ?? end.relationship.name
        guard let former = old.end(of: relationship, from: entity), former.entityName == entity else { return nil }
        return former
    }

    /// A to-many (as declared) that gains or loses its to-one inverse in this migration, with the old end it was.
    package struct InverseMove {
        /// The to-many as the new model declares it.
        package let end: RelationshipEnd
        /// The same to-many in the old model.
        package let former: RelationshipEnd
        package let conversion: ModelDiff.InverseConversion
    }

    /// Every to-many of `new`'s served entities whose members' owners move because it gained a new to-one
    /// inverse or lost its to-one inverse (`ModelDiff.InverseConversion`): each store converts them, SQL
    /// between the inverse's key column and the hidden key column, LMDB between the rows' key and owner links.
    package static func inverseMoves(report: CompatibilityReport, old: ObjectModel, new: ObjectModel) -> [InverseMove] {
        let context = ModelDiff.Context(oldModel: old, newModel: new)
        var seen: Set<String> = []
        var moves: [InverseMove] = []
        for change in report.entities where change.kind != .added && change.kind != .removed {
            for p in change.properties where p.isRelationship && p.kind == .detailsChanged && p.isInferable {
                guard let end = new.end(of: p.name, from: change.name), end.relationship.isToMany, seen.insert(end.key).inserted,
                    let former = formerEnd(of: end, report: report, old: old),
                    let conversion = context.inverseConversion(from: former.relationship, to: end.relationship)
                else { continue }
                moves.append(InverseMove(end: end, former: former, conversion: conversion))
            }
        }
        return moves
    }
}
