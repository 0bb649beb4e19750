import Foundation

// MARK: - StoreMetadata

/// A store's metadata, with Core Data's keys: what type it is, its UUID, and which model wrote it.
/// Keys an application added are kept in `additional` and survive every rewrite.
public struct StoreMetadata: Sendable, Hashable {
    /// `NSStoreType`, Core Data's key for the store type.
    public static let storeTypeKey = "NSStoreType"
    /// `NSStoreUUID`, the store's identifier (the UUID in its object URIs).
    public static let uuidKey = "NSStoreUUID"
    /// `NSStoreModelVersionHashes`: entity name -> version hash of the model that wrote the store.
    public static let versionHashesKey = "NSStoreModelVersionHashes"
    /// `NSStoreModelVersionHashesVersion`: the hash scheme's version.
    public static let versionHashesVersionKey = "NSStoreModelVersionHashesVersion"
    /// `NSStoreModelVersionIdentifiers`: the model's version identifiers.
    public static let versionIdentifiersKey = "NSStoreModelVersionIdentifiers"
    /// `NSPersistenceFrameworkVersion`: set by Core Data on stores it wrote.
    public static let frameworkVersionKey = "NSPersistenceFrameworkVersion"
    /// Set on SQLite stores Switchyard creates: "Allows External Storage" attributes are kept in Core Data's
    /// format (a marker byte, then the value or a file name). Stores Switchyard wrote before hold bare bytes.
    package static let externalDataFormatKey = "SwitchyardExternalBinaryDataFormat"
    package static let reservedKeys: Set<String> = [
        storeTypeKey, uuidKey, versionHashesKey, versionHashesVersionKey, versionIdentifiersKey,
    ]

    /// `NSStoreType`: "SQLite", "LMDB" or "InMemory".
    public var storeType: String
    /// `NSStoreUUID`: the store's identifier.
    public var uuid: UUID
    /// Entity name -> version hash of the model that last wrote the store.
    public var versionHashes: [String: Data]
    /// The version identifiers of the model that last wrote the store.
    public var versionIdentifiers: [String]
    /// Every other key, including the app's own and `NSPersistenceFrameworkVersion`.
    public var additional: [String: PropertyListValue]

    /// Metadata for a store of `storeType`.
    public init(
        storeType: String, uuid: UUID = UUID(), versionHashes: [String: Data] = [:], versionIdentifiers: [String] = [],
        additional: [String: PropertyListValue] = [:]
    ) {
        self.storeType = storeType
        self.uuid = uuid
        self.versionHashes = versionHashes
        self.versionIdentifiers = versionIdentifiers
        self.additional = additional
    }

    /// The metadata as a property-list dictionary, Core Data's key names.
    public var propertyList: [String: PropertyListValue] {
        var dict = additional
        dict[Self.storeTypeKey] = .string(storeType)
        dict[Self.uuidKey] = .string(uuid.uuidString)
        dict[Self.versionHashesKey] = .dictionary(versionHashes.mapValues { .data($0) })
        dict[Self.versionHashesVersionKey] = .integer(3)
        dict[Self.versionIdentifiersKey] = .array(versionIdentifiers.map { .string($0) })
        return dict
    }

    /// Reads Core Data's keys from a property-list dictionary; `nil` when `NSStoreType` or `NSStoreUUID` is missing.
    public init?(propertyList dict: [String: PropertyListValue]) {
        guard case .string(let type)? = dict[Self.storeTypeKey], case .string(let uuidString)? = dict[Self.uuidKey],
            let uuid = UUID(uuidString: uuidString)
        else { return nil }
        self.storeType = type
        self.uuid = uuid
        var hashes: [String: Data] = [:]
        if case .dictionary(let h)? = dict[Self.versionHashesKey] {
            for (k, v) in h { if case .data(let d) = v { hashes[k] = d } }
        }
        self.versionHashes = hashes
        var identifiers: [String] = []
        if case .array(let a)? = dict[Self.versionIdentifiersKey] {
            for v in a { if case .string(let s) = v { identifiers.append(s) } }
        }
        self.versionIdentifiers = identifiers
        self.additional = dict.filter { !Self.reservedKeys.contains($0.key) }
    }

    /// Encodes as a binary property list (what `Z_METADATA.Z_PLIST` holds).
    public func binaryPropertyList() throws -> Data {
        let dict = propertyList.mapValues(\.foundationValue) as NSDictionary
        return try PropertyListSerialization.data(fromPropertyList: dict, format: .binary, options: 0)
    }

    /// Decodes a property list written by Core Data or by this library.
    public static func decode(_ data: Data) throws -> StoreMetadata? {
        guard let values = try PropertyListValue.decodeMetadataDictionary(data, source: "store metadata") else { return nil }
        return StoreMetadata(propertyList: values)
    }
}
