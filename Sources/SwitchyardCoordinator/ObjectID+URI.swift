import Foundation
import SwitchyardModel

// The URI form is parsed here rather than beside `ObjectID` because a malformed URI is a `CoordinatorError`,
// which the model layer cannot name.
extension ObjectID {
    /// Parses `x-coredata://UUID/Entity/pN` (and the temporary form).
    public init(uri: String) throws {
        let prefix = "x-coredata://"
        guard uri.hasPrefix(prefix) else { throw CoordinatorError.invalidObjectURI(uri, reason: "does not start with \(prefix)") }
        let parts = uri.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[1].isEmpty, parts[2].count > 1 else {
            throw CoordinatorError.invalidObjectURI(uri, reason: "expected x-coredata://STORE-UUID/Entity/pN")
        }
        let key = parts[2]
        if parts[0].isEmpty {
            guard key.first == "t", let t = UUID(uuidString: String(key.dropFirst())) else {
                throw CoordinatorError.invalidObjectURI(uri, reason: "a temporary ID ends in /tUUID")
            }
            self.init(entityName: parts[1], storage: .temporary(t))
            return
        }
        guard let store = UUID(uuidString: parts[0]) else {
            throw CoordinatorError.invalidObjectURI(uri, reason: "'\(parts[0])' is not a store UUID")
        }
        guard key.first == "p", let pk = Int64(key.dropFirst()), pk > 0 else {
            throw CoordinatorError.invalidObjectURI(uri, reason: "'\(key)' is not a primary key of the form pN")
        }
        self.init(store: store, entityName: parts[1], primaryKey: pk)
    }
}

// MARK: - Codable

/// An ID encodes as its URI (`x-coredata://UUID/Entity/pN`), as Core Data archives `URIRepresentation()`, so a
/// `#Predicate` can capture it (`#Predicate<Message> { $0.chat?.objectID == chatID }`) and an app can keep it.
extension ObjectID: Codable {
    /// Decodes an ID from its URI string; anything else is a `DecodingError.dataCorrupted` saying why.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let uri = try container.decode(String.self)
        do {
            try self.init(uri: uri)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
        }
    }

    /// Encodes the ID as its URI string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriRepresentation)
    }
}
