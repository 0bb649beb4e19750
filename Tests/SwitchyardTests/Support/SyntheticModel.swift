import Foundation

/// A Core Data model cache built by hand with `KeyedArchiveBuilder`, for what no fixture store shows: ordered
/// relationships, every delete rule, odd attribute types, predicates without a `FetchPredicate` form.
///
/// Entities: `Node` (title: String, optional, renamed from `caption`; weight: `weightType`, required, default
/// 1.5; children: to-many Node, inverse parent; parent: to-one Node; related: fetched property of Leaf) and
/// `Leaf` (parent Node; its NSProperties repeat Node's, as Core Data writes them, plus color: Binary with
/// external storage). Configuration `Cloud` holds both; version identifier 7.
enum SyntheticModel {
    /// How `children` says it is ordered.
    enum Ordered: Sendable {
        /// `NSIsOrdered = YES`, no `_P`.
        case byKey
        /// Only the packed `_P` flags (0x400), as the keys are ignored when `_P` is present.
        case byPackedFlags
        case no
    }

    /// The fetched property's predicate.
    enum Predicate: Sendable {
        /// `title MATCHES[c] "a.*"`: no FetchPredicate equivalent.
        case matches
        /// `title != "a.*"` as an equality operator with NSNegate.
        case notEqual
        /// `ANY title BEGINSWITH[cd] "a.*"`.
        case anyBeginsWith
        /// An AND whose two subpredicates are itself.
        case cycle
    }

    static func archive(
        childrenDeleteRule: Int64 = 2, ordered: Ordered = .byKey, weightType: Int64 = 600, predicate: Predicate = .notEqual
    ) -> Data {
        var a = KeyedArchiveBuilder()
        let model = a.reserve(), node = a.reserve(), leaf = a.reserve()
        let nodeName = a.string("Node"), leafName = a.string("Leaf")

        func properties(of entity: UInt64) -> [(UInt64, UInt64)] {
            let title = a.object("NSAttributeDescription", ["NSPropertyDescription", "NSObject"], [
                ("NSPropertyName", .ref(a.string("title"))), ("NSEntity", .ref(entity)), ("NSAttributeType", .int(700)),
                ("NSIsOptional", .bool(true)), ("NSRenamingIdentifier", .ref(a.string("caption"))),
            ])
            let weight = a.object("NSAttributeDescription", ["NSPropertyDescription", "NSObject"], [
                ("NSPropertyName", .ref(a.string("weight"))), ("NSEntity", .ref(entity)),
                ("NSAttributeType", .int(weightType)), ("NSDefaultValue", .ref(a.real(1.5))), ("_P", .int(0xF1)),
            ])
            let children = a.reserve(), parent = a.reserve()
            var childFields: [(String, KeyedArchiveBuilder.Field)] = [
                ("NSPropertyName", .ref(a.string("children"))), ("NSEntity", .ref(entity)),
                ("NSDestinationEntity", .ref(node)), ("NSInverseRelationship", .ref(parent)),
                ("_NSInverseRelationshipName", .ref(a.string("parent"))), ("NSMaxCount", .int(0)),
                ("NSMinCount", .int(0)), ("NSDeleteRule", .int(childrenDeleteRule)), ("NSIsOptional", .bool(true)),
            ]
            switch ordered {
            case .byKey: childFields.append(("NSIsOrdered", .bool(true)))
            case .byPackedFlags: childFields.append(("_P", .int(0x4F3)))
            case .no: break
            }
            a.fill(children, "NSRelationshipDescription", ["NSPropertyDescription", "NSObject"], childFields)
            a.fill(parent, "NSRelationshipDescription", ["NSPropertyDescription", "NSObject"], [
                ("NSPropertyName", .ref(a.string("parent"))), ("NSEntity", .ref(entity)),
                ("_NSDestinationEntityName", .ref(nodeName)), ("NSInverseRelationship", .ref(children)),
                ("NSMaxCount", .int(1)), ("NSMinCount", .int(0)), ("NSDeleteRule", .int(1)), ("NSIsOptional", .bool(true)),
            ])
            let request = a.object("NSFetchRequest", ["NSPersistentStoreRequest", "NSObject"], [
                ("NSEntity", .ref(leaf)), ("NSPredicate", .ref(fetchPredicate())),
            ])
            let related = a.object("NSFetchedPropertyDescription", ["NSPropertyDescription", "NSObject"], [
                ("NSPropertyName", .ref(a.string("related"))), ("NSEntity", .ref(entity)), ("NSFetchRequest", .ref(request)),
            ])
            return [
                (a.string("title"), title), (a.string("weight"), weight), (a.string("children"), children),
                (a.string("parent"), parent), (a.string("related"), related),
            ]
        }

        func expression(_ className: String, _ superclasses: [String], _ fields: [(String, KeyedArchiveBuilder.Field)]) -> UInt64 {
            a.object(className, superclasses + ["NSExpression", "NSObject"], fields)
        }

        func fetchPredicate() -> UInt64 {
            let selfExpression = expression("NSSelfExpression", [], [("NSExpressionType", .int(1))])
            let specifier = expression("NSKeyPathSpecifierExpression", [], [("NSKeyPath", .ref(a.string("title")))])
            let left = expression("NSKeyPathExpression", ["NSFunctionExpression"], [
                ("NSOperand", .ref(selfExpression)), ("NSSelectorName", .ref(a.string("valueForKey:"))),
                ("NSArguments", .ref(a.array([specifier]))), ("NSExpressionType", .int(3)),
            ])
            let right = expression("NSConstantValueExpression", [], [("NSConstantValue", .ref(a.string("a.*")))])
            let op: UInt64
            switch predicate {
            case .matches:
                op = a.object("NSMatchingPredicateOperator", ["NSStringPredicateOperator", "NSPredicateOperator", "NSObject"], [
                    ("NSOperatorType", .int(6)), ("NSModifier", .int(0)), ("NSOptions", .int(1)),
                ])
            case .notEqual, .cycle:
                op = a.object("NSEqualityPredicateOperator", ["NSPredicateOperator", "NSObject"], [
                    ("NSOperatorType", .int(4)), ("NSModifier", .int(0)), ("NSNegate", .bool(true)), ("NSOptions", .int(0)),
                ])
            case .anyBeginsWith:
                op = a.object("NSBeginsWithPredicateOperator", ["NSStringPredicateOperator", "NSPredicateOperator", "NSObject"], [
                    ("NSOperatorType", .int(8)), ("NSModifier", .int(2)), ("NSFlags", .int(3)),
                ])
            }
            let comparison = a.object("NSComparisonPredicate", ["NSPredicate", "NSObject"], [
                ("NSLeftExpression", .ref(left)), ("NSRightExpression", .ref(right)), ("NSPredicateOperator", .ref(op)),
            ])
            guard predicate == .cycle else { return comparison }
            let compound = a.reserve()
            a.fill(compound, "NSCompoundPredicate", ["NSPredicate", "NSObject"], [
                ("NSCompoundPredicateType", .int(1)), ("NSSubpredicates", .ref(a.array([compound, compound]))),
            ])
            return compound
        }

        let nodeProperties = properties(of: node)
        let color = a.object("NSAttributeDescription", ["NSPropertyDescription", "NSObject"], [
            ("NSPropertyName", .ref(a.string("color"))), ("NSEntity", .ref(leaf)), ("NSAttributeType", .int(1000)),
            ("NSIsOptional", .bool(true)), ("NSFlagsKey", .int(4)), ("NSDefaultValue", .ref(a.data(Data([1, 2, 3])))),
        ])
        let leafProperties = properties(of: leaf) + [(a.string("color"), color)]
        let entityClass = ["NSObject"]
        a.fill(node, "NSEntityDescription", entityClass, [
            ("NSEntityName", .ref(nodeName)), ("NSManagedObjectModel", .ref(model)), ("NSSuperentity", .ref(0)),
            ("NSSubentities", .ref(a.dictionary([(leafName, leaf)]))), ("NSProperties", .ref(a.dictionary(nodeProperties))),
            ("NSRenamingIdentifier", .ref(nodeName)), ("NSVersionHashModifier", .ref(a.string("v2"))),
            ("NSUserInfo", .ref(a.dictionary([(a.string("owner"), a.string("tests")), (a.string("count"), a.number(3))]))),
            ("NSIsAbstract", .bool(false)),
        ])
        a.fill(leaf, "NSEntityDescription", entityClass, [
            ("NSEntityName", .ref(leafName)), ("NSManagedObjectModel", .ref(model)), ("NSSuperentity", .ref(node)),
            ("NSProperties", .ref(a.dictionary(leafProperties))),
        ])
        a.fill(model, "NSManagedObjectModel", ["NSObject"], [
            ("NSEntities", .ref(a.dictionary([(nodeName, node), (leafName, leaf)]))),
            ("NSConfigurations", .ref(a.dictionary([(a.string("Cloud"), a.set([node, leaf]))]))),
            ("NSVersionIdentifiers", .ref(a.set([a.number(7)]))), ("NSFetchRequestTemplates", .ref(0)),
        ])
        return a.build(root: model)
    }
}
