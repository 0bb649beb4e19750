import Foundation
import SwitchyardModel

// MARK: - ModelCache

/// Reads and writes the model a store last used (`Z_MODELCACHE.Z_CONTENT` in a SQLite store), so a store's old
/// model can be recovered for migration, `storesplit` and `storeinspect` without the app's model files.
///
/// Two formats are read, both raw DEFLATE (window bits -15) on the outside:
/// - **Core Data's**: an NSKeyedArchiver binary plist whose root is the NSManagedObjectModel. It is rebuilt into
///   an `ObjectModel` (entities, inheritance, attributes, relationships, fetched properties with their predicates,
///   derived attributes, uniqueness constraints, indexes, configurations, version identifiers). Classes the
///   reader does not know, such as an app's transformable default values, are skipped, not fatal.
/// - **Switchyard's own**: the model's `.xcdatamodel` `contents` XML (`ModelWriter.xml(for:)`).
///
/// `encode` writes the second: Apple's archive is a private serialization of Objective-C objects that cannot be
/// written faithfully without Core Data, so a store written here carries XML that this library reads back equal.
/// Core Data itself does not understand that XML; a store handed back to Core Data should carry its cache anew.
///
/// ```swift
/// let model = try ModelCache.decode(blob, source: "\(path) model cache")
/// let blob = try ModelCache.encode(model)
/// ```
public enum ModelCache {
    /// A model cache inflates to kilobytes; anything near this is hostile, not a model.
    package static let maxInflatedSize = 64 << 20

    /// Rebuilds the model in `blob`; `source` is what errors and the model's `entitySources` name.
    ///
    /// Throws `ModelCacheError` for a blob that is not DEFLATE, not a keyed archive or model XML, or not a
    /// model; `ModelError` when the recovered model does not resolve (a dangling parent, destination, inverse).
    public static func decode(_ blob: Data, source: String) throws -> ObjectModel {
        let inflated: Data
        do {
            inflated = try Deflate.decompress(blob, maxOutput: maxInflatedSize)
        } catch {
            throw ModelCacheError.compression(source: source, error: error)
        }
        if inflated.starts(with: Data("bplist".utf8)) {
            do {
                let archive = try KeyedArchive(inflated, source: source)
                return try ArchivedModelReader(archive: archive, source: source).model()
            } catch let error as KeyedArchiveError {
                throw ModelCacheError.archive(error)
            }
        }
        if let start = xmlStart(inflated) {
            // From the `<`: XML allows nothing before its declaration, but a cache written by hand might.
            return try ModelLoader.load(contentsXML: inflated[start...], source: source)
        }
        throw ModelCacheError.unknownFormat(source: source, prefix: describePrefix(of: inflated))
    }

    /// The cache blob for `model`: its `contents` XML, deflated. Throws `ModelCacheError.compression` only if
    /// zlib fails (out of memory). The XML holds one version identifier, so a merged model with several
    /// decodes with the first only.
    public static func encode(_ model: ObjectModel) throws -> Data {
        do {
            return try Deflate.compress(Data(ModelWriter.xml(for: model).utf8), level: 9)
        } catch {
            throw ModelCacheError.compression(source: "model cache being written", error: error)
        }
    }

    // MARK: - Format sniffing

    /// Where the XML starts when the text begins (after a byte-order mark and whitespace) with `<?xml` or
    /// `<model`; nil for anything else.
    package static func xmlStart(_ data: Data) -> Data.Index? {
        var bytes = data.prefix(512)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard text.starts(with: Data("<?xml".utf8)) || text.starts(with: Data("<model".utf8)) else { return nil }
        return text.startIndex
    }

    /// The first bytes as hex and, where printable, as text, for the unknown-format error.
    package static func describePrefix(of data: Data) -> String {
        let head = data.prefix(16)
        if head.isEmpty { return "nothing: it is empty" }
        let printable = head.allSatisfy { (0x20..<0x7F).contains($0) }
        return printable ? "\"\(String(decoding: head, as: UTF8.self))\"" : "bytes \(head.hexString)"
    }
}
