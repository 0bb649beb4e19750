import Foundation
import SwitchyardModel

// MARK: - Properties

extension ArchivedModelReader {
    /// `_P`, NSPropertyDescription's packed flags: when present (non-zero) Core Data decodes the flags from it
    /// and not from the `NSIs...` keys, so this reader does the same.
    package enum PropertyFlag: Int64 {
        case optional = 0x2
        case readOnly = 0x4
        case transient = 0x8
        case ordered = 0x400

        /// The key Core Data also writes when the flag is set (and reads when `_P` is absent).
        package var key: String {
            switch self {
            case .optional: return "NSIsOptional"
            case .readOnly: return "NSIsReadOnly"
            case .transient: return "NSIsTransient"
            case .ordered: return "NSIsOrdered"
            }
        }
    }

    /// `NSAttributeType` -> our type; the numbers are `NSAttributeType`'s raw values.
    package static let attributeTypes: [Int64: AttributeType] = [
        0: .undefined, 100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double,
        600: .float, 700: .string, 800: .boolean, 900: .date, 1000: .binary, 1100: .uuid, 1200: .uri,
        1800: .transformable, 2000: .objectID,
    ]

    /// `NSDeleteRule` -> ours (`NSDeleteRule`'s raw values: no action, nullify, cascade, deny).
    package static let deleteRules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]

    /// `NSFlagsKey` bit for "Allows External Storage".
    package static let externalStorageFlag: Int64 = 0x4

    package func flag(_ flag: PropertyFlag, of object: ArchivedObject) -> Bool {
        if let packed = object["_P"]?.integerValue, packed != 0 { return packed & flag.rawValue != 0 }
        return object[flag.key]?.boolValue ?? false
    }

    /// Reads the property with this UID and adds it to `entity` as an attribute, relationship or fetched property.
    package func addProperty(
        _ uid: Int, named name: String, to entity: inout EntityDescription, entities: [Int: ArchivedEntity]
    ) throws {
        let object = try archive.object(uid)
        if object.isKind(of: "NSAttributeDescription") {
            entity.attributes.append(try attribute(object, name: name, entity: entity.name))
        } else if object.isKind(of: "NSRelationshipDescription") {
            entity.relationships.append(try relationship(object, name: name, entity: entity.name, entities: entities))
        } else if object.isKind(of: "NSFetchedPropertyDescription") {
            entity.fetchedProperties.append(try fetchedProperty(object, name: name, entity: entity.name, entities: entities))
        } else {
            throw invalid("entity \(entity.name) has property \(name) of class \(object.className), which this library cannot represent")
        }
    }

    // MARK: - Attributes

    private func attribute(_ object: ArchivedObject, name: String, entity: String) throws -> AttributeDescription {
        guard let code = object["NSAttributeType"]?.integerValue ?? (object["NSAttributeType"] == nil ? 0 : nil),
            let type = Self.attributeTypes[code]
        else {
            // Composite attributes (2100) and anything newer have no equivalent: say which, rather than guess.
            let value = object["NSAttributeType"]
            let code = value?.integerValue.map { String($0) } ?? value.map { "\($0)" } ?? "none"
            throw ModelError.unknownAttributeType(file: source, entity: entity, attribute: name, type: "NSAttributeType \(code)")
        }
        let flags = object["NSFlagsKey"]?.integerValue ?? 0
        var derivation: String?
        if object.isKind(of: "NSDerivedAttributeDescription"), let expression = object["NSDerivationExpression"] {
            derivation = ArchivedPredicateReader(archive: archive).derivationText(expression)
        }
        return AttributeDescription(
            name: name, type: type, isOptional: flag(.optional, of: object), isTransient: flag(.transient, of: object),
            defaultValue: object["NSDefaultValue"].flatMap { defaultValue($0, type: type) },
            renamingIdentifier: renamingIdentifier(object, name: name),
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.stringValue),
            userInfo: userInfo(object["NSUserInfo"]), isIndexed: object["NSIsIndexed"]?.boolValue ?? false,
            allowsExternalBinaryDataStorage: flags & Self.externalStorageFlag != 0, derivationExpression: derivation,
            valueTransformerName: nonEmpty(object["NSValueTransformerName"]?.stringValue))
    }

    /// An archived default value as a value of `type`, or nil where there is none or it cannot be represented
    /// (a transformable's app object, say): defaults are not part of the structure, so they never fail the model.
    package func defaultValue(_ value: ArchiveValue, type: AttributeType) -> AttributeValue? {
        switch (type, value) {
        case (_, .null): return nil
        case (.integer16, _), (.integer32, _), (.integer64, _):
            return value.integerValue.map { .integer($0) }
        case (.decimal, .object(let uid, _)):
            return decimal(uid).map { .decimal($0) }
        case (.decimal, .integer(let i)): return .decimal(Decimal(i))
        case (.decimal, .real(let d)): return .decimal(Decimal(d))
        case (.double, .integer(let i)), (.float, .integer(let i)): return .double(Double(i))
        case (.double, .real(let d)), (.float, .real(let d)): return .double(d)
        case (.string, .string(let s)): return .string(s)
        case (.boolean, _): return value.boolValue.map { .bool($0) }
        case (.date, .date(let d)): return .date(d)
        case (.date, .real(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.binary, .data(let d)): return .binary(d)
        case (.uuid, .uuid(let u)): return .uuid(u)
        case (.uri, .object(let uid, _)): return url(uid).map { .uri($0) }
        case (.uri, .string(let s)): return URL(string: s).map { .uri($0) }
        default: return nil
        }
    }

    /// An archived NSDecimalNumber (Apple writes the class as `NSDecimalNumberPlaceholder`): `NS.mantissa`,
    /// 16 bytes of 16-bit words least significant first, `NS.length` of them in use, in the byte order
    /// `NS.mantissa.bo` names (1 little-endian, the only one Apple writes; 2 big-endian), `NS.exponent` (a
    /// signed byte) and `NS.negative`.
    private func decimal(_ uid: Int) -> Decimal? {
        guard let object = try? archive.object(uid),
            object.isKind(of: "NSDecimalNumber") || object.isKind(of: "NSDecimalNumberPlaceholder"),
            case .data(let mantissa)? = object["NS.mantissa"], let exponent = object["NS.exponent"]?.integerValue,
            let length = object["NS.length"]?.integerValue, (0...8).contains(length), mantissa.count >= Int(length) * 2,
            (-128...127).contains(exponent)
        else { return nil }
        let byteOrder = object["NS.mantissa.bo"]?.integerValue ?? 1
        guard byteOrder == 1 || byteOrder == 2 else { return nil }
        let bytes = [UInt8](mantissa)
        var significand = Decimal(0)
        for word in (0..<Int(length)).reversed() {
            let (first, second) = (Int(bytes[2 * word]), Int(bytes[2 * word + 1]))
            significand = significand * 65536 + Decimal(byteOrder == 1 ? first | second << 8 : first << 8 | second)
        }
        let negative = object["NS.negative"]?.boolValue ?? false
        return Decimal(sign: negative ? .minus : .plus, exponent: Int(exponent), significand: significand)
    }

    /// An archived NSURL: `NS.relative` against an optional `NS.base` URL.
    private func url(_ uid: Int) -> URL? {
        guard let object = try? archive.object(uid), object.isKind(of: "NSURL"),
            let relative = object["NS.relative"]?.stringValue
        else { return nil }
        var base: URL?
        if case .object(let baseUID, _)? = object["NS.base"] { base = url(baseUID) }
        return URL(string: relative, relativeTo: base)?.absoluteURL
    }

    // MARK: - Relationships

    private func relationship(
        _ object: ArchivedObject, name: String, entity: String, entities: [Int: ArchivedEntity]
    ) throws -> RelationshipDescription {
        let destination: String
        if case .object(let uid, _)? = object["NSDestinationEntity"] {
            destination = try entityName(uid, entities: entities)
        } else if let lazyName = nonEmpty(object["_NSDestinationEntityName"]?.stringValue) {
            destination = lazyName
        } else {
            throw invalid("relationship \(entity).\(name) has no destination entity")
        }
        var inverse = nonEmpty(object["_NSInverseRelationshipName"]?.stringValue)
        if inverse == nil, case .object(let uid, _)? = object["NSInverseRelationship"] {
            inverse = (try archive.object(uid))["NSPropertyName"]?.stringValue
        }
        let ruleCode = object["NSDeleteRule"]?.integerValue ?? 0
        guard let rule = Self.deleteRules[ruleCode] else {
            throw invalid("relationship \(entity).\(name) has NSDeleteRule \(ruleCode); expected 0...3")
        }
        // NSMaxCount 1 is a to-one; anything else a to-many, where 0 and negative values (NSUIntegerMax or
        // Int.max truncated to the 32-bit int the coder writes) mean unbounded.
        let maxCount = object["NSMaxCount"]?.integerValue ?? 0
        let isToMany = maxCount != 1
        let minCount = max(0, min(object["NSMinCount"]?.integerValue ?? 0, Int64(Int32.max)))
        return RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: isToMany,
            isOrdered: flag(.ordered, of: object), minCount: Int(minCount),
            maxCount: isToMany ? (maxCount > 1 && maxCount <= Int64(Int32.max) ? Int(maxCount) : 0) : 1,
            deleteRule: rule, isOptional: flag(.optional, of: object), isTransient: flag(.transient, of: object),
            renamingIdentifier: renamingIdentifier(object, name: name),
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.stringValue),
            userInfo: userInfo(object["NSUserInfo"]))
    }

    // MARK: - Fetched properties

    /// A fetched property: the destination from its fetch request's entity (or the lazily kept entity name),
    /// the predicate converted to format text. The request's sort descriptors have no equivalent here.
    private func fetchedProperty(
        _ object: ArchivedObject, name: String, entity: String, entities: [Int: ArchivedEntity]
    ) throws -> FetchedPropertyDescription {
        var request: ArchivedObject?
        if case .object(let uid, _)? = object["NSFetchRequest"] { request = try archive.object(uid) }
        var destination: String?
        if case .object(let uid, _)? = request?["NSEntity"] {
            destination = try entityName(uid, entities: entities)
        }
        destination = destination ?? nonEmpty(object["_NSFetchRequestEntityName"]?.stringValue)
            ?? nonEmpty(request?["NSEntityName"]?.stringValue)
        guard let destination else {
            throw invalid("fetched property \(entity).\(name) has no fetch request entity")
        }
        var predicate = "TRUEPREDICATE"  // no predicate fetches every object, as in the XML loader
        if let archived = request?["NSPredicate"], !archived.isNull {
            predicate = ArchivedPredicateReader(archive: archive).format(archived)
        }
        return FetchedPropertyDescription(
            name: name, destination: destination, predicate: predicate,
            renamingIdentifier: renamingIdentifier(object, name: name),
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.stringValue),
            userInfo: userInfo(object["NSUserInfo"]))
    }
}
