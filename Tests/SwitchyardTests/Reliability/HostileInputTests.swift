import Foundation
import Testing
import Switchyard

/// Outside bytes that used to kill the process: each now ends in a typed error naming the file.
@Suite struct HostileInputTests {
    let dir = TemporaryDirectory()

    /// Invalid UTF-8 in an element name, an attribute name or a processing instruction trapped Foundation's
    /// XMLParser (SIGILL).
    @Test(arguments: [
        "model-xmlparser-invalid-utf8-element-name.xml",
        "model-xmlparser-invalid-utf8-attribute-name.xml",
        "model-xmlparser-invalid-utf8-processing-instruction.xml",
        "model-xmlparser-fuzz-misspelled-encoding.xml",   // found by Tools/fuzz.sh modelxml
        "model-xmlparser-fuzz-empty-processing-instruction.xml",   // idem (SIGSEGV in FoundationXML)
    ])
    func modelXMLWithInvalidUTF8IsMalformed(name: String) throws {
        let file = dir.file("contents")
        try Reproducers.data(name).write(to: file)
        #expect {
            _ = try ModelLoader.load(at: file)
        } throws: { error in
            guard case ModelError.malformedXML(let source, _, _, let reason) = error else { return false }
            return source.hasSuffix("contents") && (reason.contains("invalid UTF-8") || reason.contains("processing instruction"))
        }
    }

    /// Valid multi-byte UTF-8 in names and text still loads.
    @Test func modelXMLWithMultibyteNamesLoads() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <model type="com.apple.IDECoreDataModeler.DataModel"><entity name="Café" representedClassName="Café">\
            <attribute name="prénom" attributeType="String" defaultValueString="𝄞 ü"/></entity></model>
            """
        let model = try ModelLoader.load(contentsXML: Data(xml.utf8), source: "inline")
        #expect(model.entity(named: "Café")?.attributes.map(\.name) == ["prénom"])
    }

    /// A damaged `Z_METADATA.Z_PLIST` (an NSSet-shaped object in a binary plist) crashed every SQLite open
    /// (SIGSEGV while bridging corelibs-foundation's object).
    @Test(.enabled(if: SQLite3.available, "sqlite3 is not installed"))
    func damagedMetadataPlistIsNotAStore() throws {
        let url = dir.file("damaged.sqlite")
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64)]),
        ])
        _ = try SQLiteStore(url: url, model: model, configuration: "Default")
        let blob = try Reproducers.data("metadata-zplist-nsset-segv.bplist")
        let hex = blob.map { String(format: "%02X", $0) }.joined()
        try SQLite3.execute(url.path, "UPDATE Z_METADATA SET Z_PLIST = X'\(hex)'")
        #expect {
            _ = try SQLiteStore(url: url, model: model, configuration: "Default", options: .readOnly)
        } throws: { error in
            guard case StoreError.notAStore(let path, _, let reason) = error else { return false }
            return path == url.path && reason.contains("Z_METADATA.Z_PLIST is not a dictionary")
        }
        #expect(try StoreMetadata.decode(blob) == nil)
        // Found by Tools/fuzz.sh plist: "bplist01" skipped the bounds-checked reader and crashed in Foundation.
        #expect(throws: KeyedArchiveError.self) {
            _ = try StoreMetadata.decode(try Reproducers.data("metadata-fuzz-bplist01-nsset.bplist"))
        }
        // Cut short, the same bytes are a clear error naming the column.
        try SQLite3.execute(url.path, "UPDATE Z_METADATA SET Z_PLIST = X'\(hex.prefix(200))'")
        #expect {
            _ = try SQLiteStore(url: url, model: model, configuration: "Default", options: .readOnly)
        } throws: { error in
            guard case StoreError.notAStore(let path, _, let reason) = error else { return false }
            return path == url.path && reason.contains("Z_METADATA")
        }
    }
}

/// Opening a directory as a SQLite store says so (it was an NSError dump).
@Suite struct DirectoryAsSQLiteStoreTests {
    @Test func aDirectoryIsNotASQLiteStore() throws {
        let dir = TemporaryDirectory()
        let model = try ObjectModel(entities: [EntityDescription(name: "Record")])
        for options in [StoreOptions.readOnly, .default] {
            #expect {
                _ = try SQLiteStore(url: dir.url, model: model, configuration: "Default", options: options)
            } throws: { error in
                guard case StoreError.notAStore(_, .sqlite, let reason) = error else { return false }
                return reason.contains("is a directory")
            }
        }
    }
}
