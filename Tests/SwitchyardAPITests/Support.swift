import Foundation
import SwitchyardDifferential
import Switchyard
import SwitchyardPostgreSQL
import Testing

/// Every backend a user can add, for tests parameterized over all of them: `allCases` are the embedded stores,
/// `everyStore` adds PostgreSQL (the server at `SWITCHYARD_POSTGRES_URL`, which `Tools/test.sh` starts; without
/// it those cases fail saying so, unless `SWITCHYARD_SKIP_POSTGRES=1` leaves them out on purpose).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, lmdb, memory, postgresql

    static var allCases: [Backend] { [.sqlite, .lmdb, .memory] }
    static var everyStore: [Backend] {
        allCases + (ProcessInfo.processInfo.environment["SWITCHYARD_SKIP_POSTGRES"] == "1" ? [] : [.postgresql])
    }
    /// The stores that outlive their coordinator (every one but memory): reopening, migration, read-only.
    static var persistent: [Backend] { everyStore.filter { $0 != .memory } }

    var testDescription: String { rawValue }

    var storeType: StoreType {
        switch self {
        case .sqlite: return .sqlite
        case .lmdb: return .lmdb
        case .memory: return .memory
        case .postgresql: return .postgreSQL
        }
    }

    /// A coordinator for `model` with one store of this backend for configuration `Main` inside `dir`.
    func coordinator(_ model: ObjectModel, in dir: TempDir) throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: model)
        try add(to: coordinator, configuration: "Main", in: dir.url)
        return coordinator
    }

    /// Adds a store of this backend for `configuration` inside `dir`.
    @discardableResult
    func add(
        to coordinator: StoreCoordinator, configuration: String, in dir: URL, name: String? = nil, options: StoreOptions = .default
    ) throws -> any PersistentStore {
        let file = name ?? configuration
        switch self {
        case .sqlite: return try coordinator.addStore(.sqlite, configuration: configuration, at: dir.appendingPathComponent("\(file).sqlite"), options: options)
        case .lmdb: return try coordinator.addStore(.lmdb, configuration: configuration, at: dir.appendingPathComponent("\(file).lmdb"), options: options)
        case .memory: return try coordinator.addStore(.memory, configuration: configuration, options: options)
        case .postgresql:
            return try coordinator.addStore(.postgreSQL, configuration: configuration, url: try Self.postgresURL(in: dir, name: file), options: options)
        }
    }

    /// A PostgreSQL store's URL of its own: the test server with a schema named after `dir` and `name`, so
    /// reopening the same name reaches the same store.
    static func postgresURL(in dir: URL, name: String) throws -> URL {
        guard let base = ProcessInfo.processInfo.environment["SWITCHYARD_POSTGRES_URL"].flatMap(URL.init(string:)) else {
            throw StoreError.openFailed(
                path: "postgres://(SWITCHYARD_POSTGRES_URL unset)", configuration: name,
                reason: "the PostgreSQL tests need a server: run `bash Tools/test.sh` (it starts a throwaway one), set "
                    + "SWITCHYARD_POSTGRES_URL, or SWITCHYARD_SKIP_POSTGRES=1 to leave them out")
        }
        guard let host = base.host, LoopbackHost.contains(host) else {
            throw StoreError.openFailed(
                path: "postgres://\(base.host ?? "?")", configuration: name,
                reason: "SWITCHYARD_POSTGRES_URL names a server on another machine; the tests only use one on this machine (127.0.0.1, ::1, localhost)")
        }
        let owner = dir.lastPathComponent.replacingOccurrences(of: "switchyard-api-", with: "").replacingOccurrences(of: "-", with: "").prefix(12)
        let cleaned = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(30))
        var parts = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        parts.queryItems = (parts.queryItems ?? []).filter { $0.name != "schema" && $0.name != "sslmode" }
            + [URLQueryItem(name: "schema", value: "a_\(owner)_\(cleaned)"), URLQueryItem(name: "sslmode", value: "disable")]
        return parts.url!
    }
}

/// A fresh directory, removed when the value goes away.
final class TempDir {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A small shop, written as a user would: Customer 1-n Order (inverse to-one), Order n-n Tag, indexed
/// `Order.code` and `Order.qty`, one configuration `Main`.
enum Shop {
    static func model() throws -> ObjectModel {
        let customer = EntityDescription(
            name: "Customer",
            attributes: [AttributeDescription(name: "name", type: .string, isOptional: false, isIndexed: true)],
            relationships: [RelationshipDescription(name: "orders", destination: "Order", inverse: "customer", isToMany: true)])
        let order = EntityDescription(
            name: "Order",
            attributes: [
                AttributeDescription(name: "code", type: .string, isOptional: false, isIndexed: true),
                AttributeDescription(name: "qty", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "width", type: .double),
            ],
            relationships: [
                RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "orders", isToMany: true),
            ])
        let tag = EntityDescription(
            name: "Tag",
            attributes: [AttributeDescription(name: "label", type: .string, isOptional: false)],
            relationships: [RelationshipDescription(name: "orders", destination: "Order", inverse: "tags", isToMany: true)])
        return try ObjectModel(
            entities: [customer, order, tag],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Customer", "Order", "Tag"])])
    }

    /// A coordinator with one `Main` store of `backend`.
    static func coordinator(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        try backend.coordinator(model(), in: dir)
    }

    /// A coordinator with two `Main` stores of `backend`, named `first` and `second` (the shop's entities in both).
    static func twoStores(
        _ backend: Backend, in dir: TempDir, _ first: String, _ second: String
    ) throws -> (coordinator: StoreCoordinator, first: any PersistentStore, second: any PersistentStore) {
        let coordinator = StoreCoordinator(model: try model())
        let one = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: first)
        let two = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: second)
        return (coordinator, one, two)
    }

    @discardableResult
    static func order(_ context: ObjectContext, _ code: String, qty: Int64, width: Double? = nil, customer: ManagedObject? = nil) throws -> ManagedObject {
        let o = try context.insert("Order")
        try o.set("code", code)
        try o.set("qty", qty)
        try o.set("width", width)
        if let customer { try o.setRelatedObject(customer, forKey: "customer") }
        return o
    }

    @discardableResult
    static func customer(_ context: ObjectContext, _ name: String) throws -> ManagedObject {
        let c = try context.insert("Customer")
        try c.set("name", name)
        return c
    }

    /// The codes of `objects`, in order.
    static func codes(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.get("code", as: String.self) ?? "?" }
    }
}

/// Runs `body` and checks it throws the `ContextError` case `matches` accepts.
func expectContextError(
    _ what: String, _ matches: (ContextError) -> Bool, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("\(what): no error thrown", sourceLocation: sourceLocation)
    } catch let error as ContextError {
        #expect(matches(error), "\(what): \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(what): \(error) is not a ContextError", sourceLocation: sourceLocation)
    }
}

func isDetached(_ e: ContextError) -> Bool { if case .detachedObject = e { return true } else { return false } }
func isDeleted(_ e: ContextError) -> Bool { if case .deletedObject = e { return true } else { return false } }
