import Foundation
import SwitchyardModel

// MARK: - ModelLoader

/// Loads object models from Xcode's files: a versioned `.xcdatamodeld` bundle, one `.xcdatamodel` version, or
/// a bare `contents` XML file. Every error names the file at fault.
///
/// ```swift
/// let model = try ModelLoader.load(at: URL(fileURLWithPath: "Schemas/Messenger.xcdatamodeld"))
/// let merged = try ModelLoader.load(urls: [appModel, pluginModel])
/// ```
public enum ModelLoader {
    /// The key of `.xccurrentversion` that names the bundle's current version.
    package static let currentVersionKey = "_XCCurrentVersionName"

    /// Loads the model at `url`: an `.xcdatamodeld` bundle (its current version), an `.xcdatamodel` directory,
    /// or a `contents` file. A version in the pre-Xcode-4 format (`elements` and `layout`, no `contents`) is read
    /// from its `elements` keyed archive.
    ///
    /// A bundle's current version is the one `.xccurrentversion` names, even when a newer version exists.
    /// Without `.xccurrentversion`, a bundle with one version uses it, and a bundle with several uses the last
    /// in numeric-aware name order ("Model 10" after "Model 9"), which is what Xcode picks for a new bundle.
    public static func load(at url: URL) throws -> ObjectModel {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelError.fileNotFound(path: path)
        }
        guard isDirectory.boolValue else {
            return url.lastPathComponent == "elements" ? try ElementsModelReader.load(at: url) : try loadContents(at: url)
        }
        let contents = url.appendingPathComponent("contents")
        if url.pathExtension == "xcdatamodeld" || !FileManager.default.fileExists(atPath: contents.path) {
            if url.pathExtension == "xcdatamodel" { return try loadVersion(url) }
            return try loadVersion(try currentVersion(ofBundle: url))
        }
        return try loadContents(at: contents)
    }

    /// One `.xcdatamodel` version: its `contents` XML (Xcode 4 and later), else its `elements` keyed archive
    /// (earlier Xcode; a bundle may mix both formats).
    private static func loadVersion(_ version: URL) throws -> ObjectModel {
        let contents = version.appendingPathComponent("contents")
        let elements = version.appendingPathComponent("elements")
        if !FileManager.default.fileExists(atPath: contents.path), FileManager.default.fileExists(atPath: elements.path) {
            return try ElementsModelReader.load(at: elements)
        }
        return try loadContents(at: contents)
    }

    /// Parses `contents` XML; `source` (normally the file path) is what errors name.
    public static func load(contentsXML: Data, source: String) throws -> ObjectModel {
        let reader = try ModelXMLReader.read(contentsXML, source: source)
        return try ObjectModel(
            entities: reader.entities, configurations: reader.configurations,
            versionIdentifiers: reader.versionIdentifiers, source: source)
    }

    /// Loads each model and merges them (`ObjectModel.merged`); an entity declared twice is an error naming
    /// both files.
    public static func load(urls: [URL]) throws -> ObjectModel {
        try ObjectModel.merged(urls.map { try load(at: $0) })
    }

    /// Every version of an `.xcdatamodeld` bundle from the oldest to the current one, in numeric-aware name
    /// order ("Model 10" after "Model 9"), for a `MigrationChain`. Versions ordered after the current one
    /// (`.xccurrentversion`) are left out: a chain ends at the model the app runs with.
    ///
    /// ```swift
    /// let versions = try ModelLoader.loadVersions(ofBundle: URL(fileURLWithPath: "Messenger.xcdatamodeld"))
    /// let chain = try MigrationChain(versions: versions)
    /// ```
    public static func loadVersions(ofBundle bundle: URL) throws -> [ModelVersion] {
        let names = try versionNames(inBundle: bundle)
        let current = try currentVersion(ofBundle: bundle).lastPathComponent
        guard let end = names.firstIndex(of: current) else {
            throw ModelError.missingElement(file: bundle.path, element: ".xcdatamodel version", reason: "no version named \(current)")
        }
        return try names[...end].map { name in
            ModelVersion(name: String(name.dropLast(".xcdatamodel".count)), model: try loadVersion(bundle.appendingPathComponent(name)))
        }
    }

    // MARK: - Files

    private static func loadContents(at url: URL) throws -> ObjectModel {
        guard FileManager.default.fileExists(atPath: url.path) else { throw ModelError.fileNotFound(path: url.path) }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelError.unreadableFile(path: url.path, reason: error.localizedDescription)
        }
        return try load(contentsXML: data, source: url.path)
    }

    /// The `.xcdatamodel` directory a bundle's current version names.
    package static func currentVersion(ofBundle bundle: URL) throws -> URL {
        let versions = try versionNames(inBundle: bundle)
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if FileManager.default.fileExists(atPath: marker.path), var name = try currentVersionName(in: marker) {
            if !name.hasSuffix(".xcdatamodel") { name += ".xcdatamodel" }
            guard versions.contains(name) else {
                throw ModelError.missingCurrentVersion(file: marker.path, version: name, available: versions)
            }
            return bundle.appendingPathComponent(name)
        }
        guard let last = versions.last else {
            throw ModelError.missingElement(
                file: bundle.path, element: ".xcdatamodel version",
                reason: "the directory holds neither a contents file nor any .xcdatamodel version")
        }
        return bundle.appendingPathComponent(last)
    }

    /// The bundle's `.xcdatamodel` entries, in numeric-aware name order.
    private static func versionNames(inBundle bundle: URL) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw ModelError.unreadableFile(path: bundle.path, reason: error.localizedDescription)
        }
        // Compare without the extension, or "Model.xcdatamodel" would sort after "Model 2.xcdatamodel".
        func stem(_ name: String) -> String { String(name.dropLast(".xcdatamodel".count)) }
        return names.filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { stem($0).compare(stem($1), options: [.numeric]) == .orderedAscending }
    }

    /// The version `.xccurrentversion` names; `nil` when the plist lacks the key (then the bundle is treated as
    /// having no marker at all).
    private static func currentVersionName(in marker: URL) throws -> String? {
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: marker), format: nil)
        } catch {
            throw ModelError.unreadableFile(path: marker.path, reason: "not a property list: \(error.localizedDescription)")
        }
        guard let dictionary = plist as? [String: Any] else {
            throw ModelError.unreadableFile(path: marker.path, reason: "the property list is not a dictionary")
        }
        guard let name = dictionary[currentVersionKey] as? String, !name.isEmpty else { return nil }
        return name
    }
}
