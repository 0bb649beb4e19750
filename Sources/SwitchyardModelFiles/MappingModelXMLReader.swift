import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import SwitchyardModel

// MARK: - MappingModelXMLReader

/// Reads the objects of an `xcmapping.xml` (a Core Data XML store): each `<object type= id=>` with its
/// `<attribute name=>` texts and `<relationship name= idrefs=>` references. Attribute and relationship names
/// are lower-cased, types upper-cased, as the file's own model spells them inconsistently across Xcode versions.
package final class MappingModelXMLReader: NSObject, XMLParserDelegate {
    package struct Object {
        package var id: String
        package var type: String
        package var attributes: [String: String] = [:]
        package var relationships: [String: [String]] = [:]
    }

    private let source: String
    private var objects: [String: Object] = [:]
    private var current: Object?
    private var attributeName: String?
    private var text = ""
    private var parseError: (line: Int, column: Int, reason: String)?

    private init(source: String) {
        self.source = source
    }

    /// Every object of the file by id; malformed XML is `ModelError.malformedXML` naming the file.
    package static func read(_ data: Data, source: String) throws -> [String: Object] {
        try ModelXMLReader.checkEncoding(data, source: source)
        let reader = MappingModelXMLReader(source: source)
        let parser = XMLParser(data: data)
        parser.delegate = reader
        parser.shouldResolveExternalEntities = false
        let ok = parser.parse()
        if !ok || reader.parseError != nil {
            let error = reader.parseError ?? (parser.lineNumber, parser.columnNumber, parser.parserError.map { "\($0)" } ?? "unknown error")
            throw ModelError.malformedXML(file: source, line: error.line, column: error.column, reason: error.reason)
        }
        return reader.objects
    }

    package func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch elementName {
        case "object":
            current = Object(id: attributes["id"] ?? "", type: (attributes["type"] ?? "").uppercased())
        case "attribute" where current != nil:
            attributeName = attributes["name"]?.lowercased()
            text = ""
        case "relationship" where current != nil:
            if let name = attributes["name"]?.lowercased() {
                current?.relationships[name] = (attributes["idrefs"] ?? "").split(separator: " ").map(String.init)
            }
        default:
            break
        }
    }

    package func parser(_ parser: XMLParser, foundCharacters string: String) {
        if attributeName != nil { text += string }
    }

    package func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        switch elementName {
        case "attribute":
            if let name = attributeName { current?.attributes[name] = text.trimmingCharacters(in: .whitespacesAndNewlines) }
            attributeName = nil
        case "object":
            if let object = current, !object.id.isEmpty { objects[object.id] = object }
            current = nil
        default:
            break
        }
    }

    package func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard self.parseError == nil else { return }
        self.parseError = (parser.lineNumber, parser.columnNumber, "\(parseError)")
    }
}
