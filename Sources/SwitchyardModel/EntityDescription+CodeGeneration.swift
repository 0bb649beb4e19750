import Foundation

// MARK: - CodeGeneration

extension EntityDescription {
    /// Xcode's Codegen setting for an entity (`codeGenerationType` in the model file), which decides what Xcode
    /// generates for its class and what `storeinspect codegen` generates for its Swift type.
    /// ```swift
    /// let draft = EntityDescription(name: "Draft", codeGeneration: .manual)   // you write `struct Draft`
    /// ```
    public enum CodeGeneration: String, Sendable, Hashable, CaseIterable {
        /// Class Definition (`codeGenerationType="class"`): the whole type is generated.
        case classDefinition = "class"
        /// Category/Extension (`codeGenerationType="category"`): the properties are generated in an extension
        /// that makes the type an `EntityObject`; you declare the type (`struct Draft { let managedObject:
        /// ManagedObject }`) and add your own members.
        case category
        /// Manual/None (no `codeGenerationType`): nothing is generated; you write the type.
        case manual
    }
}

/// A value kept beside a type's synthesized `Hashable` without taking part in it (every two are equal).
struct OutsideEquality<Value: Sendable>: Hashable, Sendable {
    var value: Value
    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
