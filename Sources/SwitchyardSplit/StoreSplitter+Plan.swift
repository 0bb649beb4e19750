import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Planning

extension StoreSplitter {
    /// Decides every entity's destination, counts rows, maps renamed and crossing properties, and lists what
    /// is skipped. Throws `SplitError.usage` for bad destinations and `SplitError.planning` with every problem
    /// found (each says what the target model must declare).
    public func plan() throws -> SplitPlan {
        let destinationByConfiguration = try checkDestinations()
        var problems: [String] = []
        var warnings: [String] = []
        var skipped: [SplitPlan.Skipped] = []

        // Target entity for each source entity (see `RenameMatching`).
        var targetBySource: [String: String] = [:]
        let entityMatching = RenameMatching(entitiesOf: sourceModel, targetModel)
        for target in targetModel.entities {
            if let name = entityMatching.sourceName(of: target.name),
                targetBySource[name] == nil
            {
                targetBySource[name] = target.name
            }
        }
        var destinationOfTarget: [String: Int] = [:]
        for target in targetModel.entities {
            let indexes = destinationByConfiguration.filter { config, _ in
                (try? targetModel.entities(inConfiguration: config).contains { $0.name == target.name }) ?? false
            }.map(\.value).sorted()
            if indexes.count > 1 {
                let names = indexes.map { destinations[$0].configuration }
                problems.append(
                    "entity \(target.name) is in configurations \(names.joined(separator: " and ")), each given a --store; "
                        + "a split copies each object once: give only one of them a --store or keep the entity in one")
            }
            if let first = indexes.first { destinationOfTarget[target.name] = first }
        }
        func configuration(ofSource name: String) -> String? {
            targetBySource[name].flatMap { destinationOfTarget[$0] }.map { destinations[$0].configuration }
        }

        var copies: [SplitPlan.EntityCopy] = []
        var mappings: [EntityMapping] = []
        var conversions: [SplitPlan.Conversion] = []
        // The entities the source store holds: a split output (or any store of one configuration) holds only
        // its configuration's, though its model cache describes the whole model.
        for entity in source.entities {
            let rows = entity.isAbstract ? 0 : try countRows(entity.name)
            guard let targetName = targetBySource[entity.name], let target = targetModel.entity(named: targetName) else {
                if rows > 0 {
                    skipped.append(.init(kind: "entity", name: entity.name, rows: rows, reason: "not in the target model"))
                    warnings.append("entity \(entity.name) is not in the target model: its \(rows) rows are not copied")
                }
                continue
            }
            guard let destination = destinationOfTarget[targetName] else {
                let configs = targetModel.configurations(containing: targetName)
                if rows > 0 {
                    problems.append(
                        "entity \(targetName) (\(rows) rows) is in configuration \(configs.isEmpty ? ConfigurationDescription.defaultName : configs.joined(separator: ", ")), "
                            + "which has no --store: add --store \(configs.first ?? ConfigurationDescription.defaultName)=PATH")
                }
                continue
            }
            let mapping = mapEntity(
                entity, to: target, rows: rows, targetBySource: targetBySource, configuration: configuration(ofSource:),
                problems: &problems, warnings: &warnings, conversions: &conversions)
            if target.isAbstract && rows > 0 {
                problems.append("entity \(targetName) is abstract in the target model but the source holds \(rows) rows of it")
            }
            copies.append(.init(
                sourceEntity: entity.name, targetEntity: targetName, configuration: destinations[destination].configuration,
                destination: destination, rowCount: rows))
            mappings.append(mapping)
        }

        let extraneous = try (source as? BulkCopyStore)?.extraneousItems() ?? []
        for item in extraneous {
            skipped.append(.init(kind: item.kind, name: item.name, rows: item.rows, reason: item.reason))
        }
        if !extraneous.isEmpty { warnings.append(Self.extraneousWarning(extraneous)) }
        let links = planLinks(copies: copies, targetBySource: targetBySource, problems: &problems, warnings: &warnings)
        let sourceRanges = try (source as? BulkCopyStore)?.primaryKeyRanges() ?? [:]
        problems += Self.clashingHierarchies(copies: copies, mappings: mappings, ranges: sourceRanges, destinations: destinations)
        if !problems.isEmpty { throw SplitError.planning(problems) }

        // Copy order: destination by destination, entities in source entity-number order.
        let order = copies.indices.sorted { (copies[$0].destination, $0) < (copies[$1].destination, $1) }
        var maxima = [[String: Int64]](repeating: [:], count: destinations.count)
        let sourceMaxima = try (source as? BulkCopyStore)?.primaryKeyMaxima() ?? [:]
        var largest = [[String: Int64]](repeating: [:], count: destinations.count)
        let sourceLargest = sourceRanges.mapValues(\.upperBound)
        for (copy, mapping) in zip(copies, mappings) {
            let value = max(sourceMaxima[copy.sourceEntity] ?? 0, sourceMaxima[mapping.sourceEntity.rootName] ?? 0)
            let root = mapping.targetEntity.rootName
            maxima[copy.destination][root] = max(maxima[copy.destination][root] ?? 0, value)
            if copy.rowCount > 0, let key = sourceLargest[mapping.sourceEntity.rootName] {
                largest[copy.destination][root] = max(largest[copy.destination][root] ?? 0, key)
            }
        }
        // `Z_MAX` is copied, never recomputed, unless it lies below keys the source holds (a hand-edited or
        // damaged store): then new objects would reuse a key, so the output's `Z_MAX` is raised to the largest.
        var raised = [[String: Int64]](repeating: [:], count: destinations.count)
        for index in destinations.indices {
            for (root, key) in largest[index].sorted(by: { $0.key < $1.key }) where key > maxima[index][root] ?? 0 {
                let recorded = maxima[index][root] ?? 0
                raised[index][root] = recorded
                maxima[index][root] = key
                warnings.append(
                    "Z_MAX of \(root) is \(recorded) but the source holds primary keys up to \(key): the \(destinations[index].configuration) "
                        + "output's Z_MAX is raised to \(key) so new objects never reuse a key")
            }
        }
        // The app's own keys travel; Core Data's (`NS...`, `_NS...`) describe the source file and its model.
        let metadataKeys = try source.metadata().additional.filter { key, _ in !key.hasPrefix("NS") && !key.hasPrefix("_NS") }
        return SplitPlan(
            source: sourceURL, sourceType: sourceType, sourceModelOrigin: sourceModelOrigin, destinations: destinations,
            entities: order.map { copies[$0] }, conversions: conversions, links: links.map(\.copy), skipped: skipped,
            warnings: warnings, sourceModel: sourceModel, targetModel: targetModel, mappings: order.map { mappings[$0] },
            linkMappings: links.map(\.mapping),
            entityNames: targetBySource, primaryKeyMaxima: maxima, raisedPrimaryKeyMaxima: raised, metadataKeys: metadataKeys)
    }

    /// Objects of two source inheritance roots that would share one root of the target in one output, where
    /// the roots' primary keys overlap: the objects of one root share one key sequence (one table), and a split
    /// keeps every object's key, so the copy would stop at the first clash (after `--dry-run` had passed). Keys
    /// are compared by each source root's range, which covers every subentity of it: a range may overlap where
    /// the copied rows' keys do not, and is then refused too.
    static func clashingHierarchies(
        copies: [SplitPlan.EntityCopy], mappings: [EntityMapping], ranges: [String: ClosedRange<Int64>],
        destinations: [SplitDestination]
    ) -> [String] {
        // Output and target root -> source root -> the source entities with rows going there.
        var sources: [Int: [String: [String: [String]]]] = [:]
        for (copy, mapping) in zip(copies, mappings) where copy.rowCount > 0 {
            sources[copy.destination, default: [:]][mapping.targetEntity.rootName, default: [:]][mapping.sourceEntity.rootName, default: []]
                .append(copy.sourceEntity)
        }
        var problems: [String] = []
        for (destination, roots) in sources.sorted(by: { $0.key < $1.key }) {
            for (targetRoot, bySourceRoot) in roots.sorted(by: { $0.key < $1.key }) where bySourceRoot.count > 1 {
                let ordered = bySourceRoot.keys.sorted()
                for (i, first) in ordered.enumerated() {
                    for second in ordered[(i + 1)...] {
                        guard let a = ranges[first], let b = ranges[second], a.overlaps(b) else { continue }
                        func describe(_ root: String, _ range: ClosedRange<Int64>) -> String {
                            let entities = bySourceRoot[root]!.sorted().joined(separator: ", ")
                            return "\(entities) (source hierarchy \(root), primary keys \(range.lowerBound)–\(range.upperBound))"
                        }
                        problems.append(
                            "\(describe(first, a)) and \(describe(second, b)) would all go into hierarchy \(targetRoot) of the "
                                + "\(destinations[destination].configuration) store, whose objects share one primary-key sequence: a split "
                                + "keeps every object's key, so theirs would clash. Keep them in separate hierarchies of the target model, "
                                + "or put them in configurations given different --store outputs")
                    }
                }
            }
        }
        return problems
    }

    /// "not copied, outside the model: persistent history (tables ACHANGE, ATRANSACTION; entities CHANGE),
    /// triggers (5), app tables (LOG)": what is left behind, grouped by who owns it.
    package static func extraneousWarning(_ items: [StoreExtraneousItem]) -> String {
        var parts: [String] = []
        for owner in StoreExtraneousItem.Owner.allCases {
            let owned = items.filter { $0.owner == owner }
            guard !owned.isEmpty else { continue }
            if owner == .trigger {
                parts.append("\(owner.rawValue) (\(owned.count))")
                continue
            }
            let groups = Dictionary(grouping: owned, by: \.kind).sorted { $0.key > $1.key }.map { kind, group in
                let noun = kind == "entity" ? (group.count == 1 ? "entity" : "entities") : kind + (group.count == 1 ? "" : "s")
                let names = group.map { $0.kind == "entity" ? String($0.name.prefix { $0 != " " }) : $0.name }
                return "\(noun) \(names.joined(separator: ", "))"
            }
            parts.append("\(owner.rawValue) (\(groups.joined(separator: "; ")))")
        }
        return "not copied, outside the model: " + parts.joined(separator: ", ")
    }

    // MARK: - Destinations

    private func checkDestinations() throws -> [String: Int] {
        guard !destinations.isEmpty else { throw SplitError.usage("no --store given: name at least one CONFIG=PATH") }
        var byConfiguration: [String: Int] = [:]
        var paths: Set<String> = [sourceURL.standardizedFileURL.path]
        for (index, destination) in destinations.enumerated() {
            guard targetModel.configurationNames.contains(destination.configuration) else {
                throw SplitError.usage(
                    "--store \(destination.configuration)=...: the target model has no configuration \(destination.configuration) "
                        + "(it has \(targetModel.configurationNames.joined(separator: ", ")))")
            }
            guard byConfiguration.updateValue(index, forKey: destination.configuration) == nil else {
                throw SplitError.usage("configuration \(destination.configuration) is given more than one --store")
            }
            let key = destination.type.isFileBased ? destination.url.standardizedFileURL.path : destination.displayPath
            guard paths.insert(key).inserted else {
                throw SplitError.usage("\(destination.displayPath) is used twice (or is the source)")
            }
        }
        return byConfiguration
    }

    private func countRows(_ entity: String) throws -> Int {
        do {
            if let bulk = source as? BulkCopyStore { return try bulk.walkingCount(entityName: entity) }
            return try source.count(StoreFetchRequest(entityName: entity, includesSubentities: false))
        } catch {
            throw SplitError.source(path: sourceURL.path, reason: "cannot count \(entity): \(error)")
        }
    }

    // MARK: - Entity mapping

    /// Whether a split can convert any non-null value of an attribute of type `old` into one of type `new`
    /// (`AttributeValue.normalized(for:)`, which the copy uses value by value: integers of another width or a
    /// Double with an integral value, Booleans from 0 and 1, a UUID or URI parsed from text). A pair for which
    /// this is false fails the copy at its first non-null value, so planning refuses it.
    package static func someValueConverts(from old: AttributeType, to new: AttributeType) -> Bool {
        if old == new { return true }
        let numbers: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float]
        let blobs: Set<AttributeType> = [.binary, .transformable]
        switch new {
        case .integer16, .integer32, .integer64, .decimal, .double, .float: return numbers.contains(old)
        case .boolean: return old.integerRange != nil
        case .binary, .transformable: return blobs.contains(old)
        case .uuid: return old == .string || blobs.contains(old)
        case .uri, .objectID: return old == .string || old == .uri
        case .string, .date, .undefined: return false
        }
    }

    // swiftlint:disable:next function_body_length
    private func mapEntity(
        _ entity: EntityDescription, to target: EntityDescription, rows: Int, targetBySource: [String: String],
        configuration: (String) -> String?, problems: inout [String], warnings: inout [String],
        conversions: inout [SplitPlan.Conversion]
    ) -> EntityMapping {
        let here = configuration(entity.name) ?? ConfigurationDescription.defaultName
        var attributes: [EntityMapping.Attribute] = []
        var crossings: [EntityMapping.Crossing] = []
        var usedRelationships: Set<String> = []
        let attributeMatching = RenameMatching(attributesOf: entity, target)
        for attribute in target.persistentAttributes {
            if let name = attributeMatching.sourceName(of: attribute.name), let old = entity.attribute(named: name)
            {
                attributes.append(.init(target: attribute, source: name, convert: old.type != attribute.type))
                if rows > 0, !Self.someValueConverts(from: old.type, to: attribute.type) {
                    // Found by a user trial: `--dry-run` approved such a plan, and the copy then failed on its
                    // first value ("value ... cannot become Integration.endedTime of type Date").
                    problems.append(
                        "\(entity.name).\(name) is \(old.type.rawValue) in the source and \(target.name).\(attribute.name) is "
                            + "\(attribute.type.rawValue) in the target model: no value but nil converts from one to the other (declare it as "
                            + "\(old.type.rawValue) in the target model, or migrate the store with a custom step first)")
                }
                continue
            }
            if let old = attribute.renamingIdentifier, let relationship = entity.relationship(named: old),
                !relationship.isToMany, !relationship.isTransient
            {
                usedRelationships.insert(old)
                let destinationTarget = targetBySource[relationship.destinationEntityName]
                let there = configuration(relationship.destinationEntityName) ?? "?"
                let subject = "\(target.name).\(attribute.name) (elementID \"\(old)\", the old relationship to \(relationship.destinationEntityName))"
                if let key = attribute.userInfo["storesplit.key"] {
                    guard let destinationTarget, let keyed = targetModel.entity(named: destinationTarget),
                        let keyAttribute = keyed.attribute(named: key),
                        let sourceDestination = sourceModel.entity(named: relationship.destinationEntityName),
                        let sourceKey = RenameMatching(attributesOf: sourceDestination, keyed)
                            .sourceName(of: keyAttribute.name)
                    else {
                        problems.append("\(subject): storesplit.key = \(key) names no attribute of \(relationship.destinationEntityName) in both models")
                        continue
                    }
                    let keyType = sourceDestination.attribute(named: sourceKey)?.type ?? keyAttribute.type
                    guard keyType == attribute.type || (keyType.isInteger && attribute.type.isInteger) else {
                        problems.append(
                            "\(subject): storesplit.key = \(key) is \(keyType.rawValue) but the attribute is "
                                + "\(attribute.type.rawValue); declare it as \(keyType.rawValue)")
                        continue
                    }
                    crossings.append(.init(target: attribute, sourceRelationship: old, kind: .key, sourceKey: sourceKey))
                    conversions.append(.init(
                        entity: target.name, relationship: old, destinationEntity: destinationTarget, attribute: attribute.name,
                        kind: .key, key: key, fromConfiguration: here, toConfiguration: there))
                } else if attribute.type == .integer64 {
                    crossings.append(.init(target: attribute, sourceRelationship: old, kind: .primaryKey, sourceKey: nil))
                    conversions.append(.init(
                        entity: target.name, relationship: old, destinationEntity: destinationTarget ?? relationship.destinationEntityName,
                        attribute: attribute.name, kind: .primaryKey, key: nil, fromConfiguration: here, toConfiguration: there))
                } else {
                    problems.append(
                        "\(subject) is \(attribute.type.rawValue): make it Integer 64 (receives the primary key) "
                            + "or give it userInfo storesplit.key = NAME (receives that attribute of the destination)")
                }
                continue
            }
            if rows > 0, !attribute.isOptional, attribute.defaultValue == nil {
                problems.append(
                    "\(target.name).\(attribute.name) is new, required and has no default value: \(rows) copied rows would lack it; "
                        + "make it optional or give it a default")
            }
            attributes.append(.init(target: attribute, source: nil, convert: false))
        }

        var toOnes: [EntityMapping.ToOne] = []
        let relationshipMatching = RenameMatching(relationshipsOf: entity, target)
        for relationship in target.allRelationships where !relationship.isTransient {
            guard let name = relationshipMatching.sourceName(of: relationship.name),
                let old = entity.relationship(named: name)
            else { continue }
            usedRelationships.insert(name)
            // To-manys are planned apart (`planLinks`): their members come with the rows or as links.
            if !relationship.isToMany, !old.isToMany { toOnes.append(.init(target: relationship.name, source: name)) }
        }

        for relationship in entity.allRelationships where !relationship.isTransient && !usedRelationships.contains(relationship.name) {
            // Inherited relationships are checked once, on the entity that declares them.
            guard entity.relationships.contains(where: { $0.name == relationship.name }) else { continue }
            let there = configuration(relationship.destinationEntityName)
            let inverse = relationship.inverseName.flatMap {
                sourceModel.entity(named: relationship.destinationEntityName)?.relationship(named: $0)
            }
            let label = "\(entity.name).\(relationship.name)"
            guard let there, there != here else {
                if !relationship.isToMany || inverse?.isToMany == true {
                    warnings.append("relationship \(label) is not in the target model: its links are not copied")
                }
                continue
            }
            let crossing = "crosses from configuration \(here) to \(there)"
            if relationship.isToMany, inverse?.isToMany ?? true {
                problems.append(
                    "\(inverse == nil ? "to-many without inverse" : "many-to-many") \(label) \(crossing): a split cannot "
                        + "carry it; declare a join entity in one configuration holding Integer 64 (or storesplit.key) "
                        + "attributes for both ends, and fetched properties to reach it")
            } else if !relationship.isToMany {
                let targetName = targetBySource[entity.name] ?? entity.name
                problems.append(
                    "to-one \(label) \(crossing): declare on \(targetName) an attribute with elementID \"\(relationship.name)\" "
                        + "(Integer 64 receives the primary key; or userInfo storesplit.key = NAME receives that attribute "
                        + "of \(relationship.destinationEntityName))")
            } else if let inverse {
                let other = targetBySource[relationship.destinationEntityName].flatMap { targetModel.entity(named: $0) }
                let declared = other?.persistentAttributes.contains { $0.renamingIdentifier == inverse.name } ?? false
                if !declared {
                    problems.append(
                        "to-many \(label) \(crossing): declare on \(other?.name ?? relationship.destinationEntityName) an attribute "
                            + "with elementID \"\(inverse.name)\" (the inverse), Integer 64 or with userInfo storesplit.key = NAME")
                }
            }
        }
        return EntityMapping(
            sourceEntity: entity, targetEntity: target, attributes: attributes, toOnes: toOnes, crossings: crossings)
    }
}
