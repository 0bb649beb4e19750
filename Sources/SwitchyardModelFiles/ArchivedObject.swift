// MARK: - ArchivedObject

/// One object of a keyed archive that is not a plain Foundation value: its class and its decoded fields.
///
/// ```swift
/// let entity = try archive.object(uid)
/// if entity.isKind(of: "NSEntityDescription") { print(entity["NSEntityName"]?.stringValue ?? "?") }
/// ```
package struct ArchivedObject: Sendable, Hashable {
    /// Its index in `$objects`.
    package let uid: Int
    /// The `$classname` of its class record (for example `NSAttributeDescription`, `MyApp.Cover`).
    package let className: String
    /// `$classes`: the class and its superclasses, most specific first.
    package let classHierarchy: [String]
    /// Every field except `$class`, decoded; other objects appear as `.object` references.
    package let fields: [String: ArchiveValue]

    /// Creates an object record (the archive builds these).
    package init(uid: Int, className: String, classHierarchy: [String], fields: [String: ArchiveValue]) {
        self.uid = uid
        self.className = className
        self.classHierarchy = classHierarchy
        self.fields = fields
    }

    /// The field `key`, or nil when the object has no such field.
    package subscript(key: String) -> ArchiveValue? { fields[key] }

    /// True when its class or a superclass is `className`.
    package func isKind(of className: String) -> Bool { classHierarchy.contains(className) }
}
