import Foundation

// MARK: - CodegenConfiguration

/// The settings a target keeps for its generated types in `switchyard-codegen.json` beside its sources, read by
/// `storeinspect codegen --config` (the `SwitchyardCodegen` build plugin passes that file when the target has one,
/// since a build plugin takes no arguments of its own):
/// ```json
/// { "access": "internal", "everyEntity": true, "prefix": "SY" }
/// ```
/// Every key is optional; a key that is present wins over the matching command-line flag.
struct CodegenConfiguration: Decodable, Equatable {
    /// The file's name in a target's directory, where the build plugin looks for it.
    static let fileName = "switchyard-codegen.json"

    /// `public` or `internal`.
    var access: String?
    /// Generate every entity, whatever its Codegen setting.
    var everyEntity: Bool?
    /// Prepended to every type name.
    var prefix: String?

    private enum Key: String, CodingKey, CaseIterable {
        case access, everyEntity, prefix
    }

    /// A key of the file, known or not, so an unknown one (a typo) can be reported rather than ignored.
    private struct AnyKey: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    init(access: String? = nil, everyEntity: Bool? = nil, prefix: String? = nil) {
        self.access = access
        self.everyEntity = everyEntity
        self.prefix = prefix
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        if let unknown = keys.sorted().first(where: { Key(rawValue: $0) == nil }) {
            throw Problem("unknown key '\(unknown)' (the keys are \(Key.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let container = try decoder.container(keyedBy: Key.self)
        access = try container.decodeIfPresent(String.self, forKey: .access)
        everyEntity = try container.decodeIfPresent(Bool.self, forKey: .everyEntity)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix)
        if let access, access != "public", access != "internal" {
            throw Problem("access must be \"public\" or \"internal\", not \"\(access)\"")
        }
        if let prefix, let problem = Self.prefixProblem(prefix) {
            throw Problem("prefix \(problem)")
        }
    }

    /// Reads the file at `url`; the error says what is wrong with it (without the path, which the caller adds).
    static func load(from url: URL) throws -> CodegenConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw Problem("cannot read the file (\((error as NSError).localizedDescription))")
        }
        do {
            return try JSONDecoder().decode(CodegenConfiguration.self, from: data)
        } catch let problem as Problem {
            throw problem
        } catch DecodingError.typeMismatch(let type, let context), DecodingError.valueNotFound(let type, let context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            if key.isEmpty { throw Problem("expected a JSON object such as {\"access\": \"internal\"}") }
            throw Problem("\(key) must be \(type == Bool.self ? "true or false" : "a string")")
        } catch DecodingError.dataCorrupted(let context) {
            let detail = (context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription
            throw Problem("not valid JSON (\(detail))")
        } catch {
            throw Problem("not valid JSON (\(error))")
        }
    }

    /// What is wrong with a type-name prefix, or nil when it can start a Swift type name.
    static func prefixProblem(_ prefix: String) -> String? {
        if prefix.unicodeScalars.contains(where: { !CharacterSet.alphanumerics.contains($0) && $0 != "_" }) {
            return "must be letters, digits or '_'"
        }
        if let first = prefix.unicodeScalars.first, CharacterSet.decimalDigits.contains(first) {
            return "must not start with a digit"
        }
        return nil
    }

    /// Why a configuration file cannot be used.
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
