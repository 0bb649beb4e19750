import Foundation
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - Moving entities between configurations

extension StoreCoordinator {
    /// An entity that the stored model kept in `source`'s configuration and the model now puts in
    /// `destination`'s.
    package struct EntityMove: Sendable {
        package var entity: String
        package var source: StoreDescription
        package var sourceModel: ObjectModel
        /// The configuration to open the source with under its stored model (`Default` if it had none by that name).
        package var sourceConfiguration: String
        package var destination: StoreDescription
    }

    /// The entities leaving each existing store of `descriptions` for another store of the same load. A store
    /// that cannot be read (or names an unknown configuration) plans no move: opening it fails on its own.
    package func plannedMoves(_ descriptions: [StoreDescription]) -> [EntityMove] {
        var moves: [EntityMove] = []
        for source in descriptions where source.type.isFileBased && !source.options.readOnly {
            guard let url = source.url, FileManager.default.fileExists(atPath: url.path),
                let stored = try? (source.type == .sqlite ? SQLiteStore.storedState(at: url, configuration: source.configuration)
                    : LMDBStore.storedState(at: url, configuration: source.configuration)),
                let old = stored.model, stored.metadata.versionHashes != model.versionHashes,
                let current = try? model.entities(inConfiguration: source.configuration)
            else { continue }
            let before = Set(((try? old.entities(inConfiguration: source.configuration)) ?? old.entities).map(\.name))
            let after = Set(current.map(\.name))
            for entity in before.subtracting(after).sorted() {
                guard let destination = descriptions.first(where: { d in
                    d != source && ((try? model.entities(inConfiguration: d.configuration))?.contains { $0.name == entity } ?? false)
                }) else { continue }
                let configuration = old.configurationNames.contains(source.configuration)
                    ? source.configuration : ConfigurationDescription.defaultName
                moves.append(EntityMove(
                    entity: entity, source: source, sourceModel: old, sourceConfiguration: configuration, destination: destination))
            }
        }
        return moves
    }

    /// Copies the moved entity's rows from the source store (opened read-only with its stored model) into
    /// `destination`, in batches, keeping primary keys. Rows the destination already has are skipped, so a
    /// move interrupted by a crash resumes; the source loses the rows only afterwards, when it is opened and
    /// migrated. Attributes and to-ones the destination cannot hold are left behind.
    package func move(_ move: EntityMove, into destination: any PersistentStore, progress: (@Sendable (StoreLoadEvent) -> Void)?) throws {
        guard let url = move.source.url, let target = model.entity(named: move.entity) else { return }
        let root = target.rootName
        let siblings = destination.entities.filter { $0.rootName == root && $0.name != move.entity }
        if let sibling = siblings.first(where: { (try? destination.count(StoreFetchRequest(entityName: $0.name, includesSubentities: false))) ?? 0 > 0 }) {
            throw CoordinatorError.cannotMoveEntity(
                entity: move.entity, from: url.path, to: destination.displayPath,
                reason: "its inheritance tree already has \(sibling.name) rows there, whose primary keys the moved rows could reuse")
        }
        let source: any PersistentStore = move.source.type == .sqlite
            ? try SQLiteStore(url: url, model: move.sourceModel, configuration: move.sourceConfiguration, options: .readOnly)
            : try LMDBStore(url: url, model: move.sourceModel, configuration: move.sourceConfiguration, options: .readOnly)
        let attributes = Set(target.persistentAttributes.map(\.name))
        let toOnes = Dictionary(target.persistentToOneRelationships.map { ($0.name, $0.destinationEntityName) }, uniquingKeysWith: { a, _ in a })
        let total = try source.count(StoreFetchRequest(entityName: move.entity, includesSubentities: false))
        var done = 0
        var highest: Int64 = 0
        while done < total {
            let batch = try source.fetch(StoreFetchRequest(
                entityName: move.entity, fetchLimit: StoreMigration.batchSize, fetchOffset: done, includesSubentities: false))
            if batch.isEmpty { break }
            let present = Set(try destination.rows(for: batch.map(\.reference)).map(\.primaryKey))
            let inserts = batch.filter { !present.contains($0.primaryKey) }.map { row in
                StoreRow(
                    entityName: move.entity, primaryKey: row.primaryKey, version: row.version,
                    values: RowValues(row.values.dictionary.filter { attributes.contains($0.key) }),
                    toOne: row.toOne.filter { name, reference in
                        toOnes[name].map { destination.serves($0) && destination.serves(reference.entityName) } ?? false
                    })
            }
            highest = max(highest, batch.map(\.primaryKey).max() ?? 0)
            // Keys above the destination's Z_MAX would be handed out again: raise it past the moved rows first.
            let next = try destination.allocatePrimaryKeys(for: move.entity, count: 1).lowerBound
            if next < highest { _ = try destination.allocatePrimaryKeys(for: move.entity, count: Int(highest - next)) }
            if !inserts.isEmpty { try destination.save(StoreChangeSet(inserts: inserts)) }
            done += batch.count
            progress?(.migrating(path: destination.displayPath, entity: move.entity, done: done, total: total))
        }
        // Z_MAX travels with the rows: keys the source handed out (to objects deleted since too) stay used.
        let sourceRoot = move.sourceModel.entity(named: move.entity)?.rootName ?? root
        if let from = source as? BulkCopyStore, let to = destination as? BulkCopyStore,
            let wanted = try from.primaryKeyMaxima()[sourceRoot], wanted > (try to.primaryKeyMaxima()[root] ?? 0)
        {
            try to.setPrimaryKeyMaxima([root: wanted])
        }
        logger.info("moved rows between stores", metadata: [
            "entity": "\(move.entity)", "from": "\(url.path)", "to": "\(destination.displayPath)", "rows": "\(done)",
        ])
    }
}
