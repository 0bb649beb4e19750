// swift-tools-version:6.1
// Switchyard: one merged object model, named configurations, one store per configuration.
import Foundation
import PackageDescription

let package = Package(
    name: "Switchyard",
    // GRDB asks for macOS 10.15 / iOS 13 and Foundation's `Predicate` (TypedPredicate's #Predicate translation) for
    // macOS 14 / iOS 17; task executors (`TaskExecutor`, `Task(executorPreference:)`: BackgroundContext, live
    // queries, the PostgreSQL store's blocking waits) for macOS 15 / iOS 18, the newest any source file needs.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "Switchyard", targets: ["Switchyard"]),
        // PostgreSQL for one configuration: a product of its own, so apps without it never build SwiftNIO.
        .library(name: "SwitchyardPostgreSQL", targets: ["SwitchyardPostgreSQL"]),
        .executable(name: "storesplit", targets: ["storesplit"]),
        .executable(name: "storeinspect", targets: ["storeinspect"]),
        .executable(name: "storefile", targets: ["storefile"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "demo", targets: ["demo"]),
        .plugin(name: "SwitchyardCodegen", targets: ["SwitchyardCodegen"]),
    ],
    // The command-line tools reach PostgreSQL stores only with this trait (`swift build --traits PostgreSQL`):
    // the codegen plugin runs storeinspect, and the demo and any app using the plugin must not build SwiftNIO.
    traits: [
        .trait(name: "PostgreSQL", description: "storesplit, storeinspect and demo read and write PostgreSQL stores (builds SwiftNIO)"),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // pkg-config finds liblmdb where Homebrew puts it (Debian ships lmdb.pc too).
        .systemLibrary(
            name: "CLMDB", path: "Sources/CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // The library's layers, lowest first. Each is a target, so the compiler keeps a lower layer from reaching a
        // higher one; they share implementation through `package` access. `Switchyard` re-exports them all.
        .target(name: "SwitchyardModel", path: "Sources/SwitchyardModel"),
        .target(name: "SwitchyardQuery", dependencies: ["SwitchyardModel"], path: "Sources/SwitchyardQuery"),
        .target(
            name: "SwitchyardModelFiles",
            dependencies: ["SwitchyardModel", "SwitchyardQuery", "CZlib"],
            path: "Sources/SwitchyardModelFiles"
        ),
        .target(
            name: "SwitchyardStores",
            dependencies: [
                "SwitchyardModel", "SwitchyardQuery", "SwitchyardModelFiles",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/SwitchyardStores"
        ),
        // One target per embedded store: only SwitchyardSQLite imports GRDB, only SwitchyardLMDB imports CLMDB.
        .target(
            name: "SwitchyardSQLite",
            dependencies: ["SwitchyardStores", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Sources/SwitchyardSQLite"
        ),
        .target(name: "SwitchyardLMDB", dependencies: ["SwitchyardStores", "CLMDB"], path: "Sources/SwitchyardLMDB"),
        .target(name: "SwitchyardMemory", dependencies: ["SwitchyardStores"], path: "Sources/SwitchyardMemory"),
        .target(
            name: "SwitchyardCoordinator",
            dependencies: [
                "SwitchyardSQLite", "SwitchyardLMDB", "SwitchyardMemory",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/SwitchyardCoordinator"
        ),
        .target(name: "SwitchyardContext", dependencies: ["SwitchyardCoordinator"], path: "Sources/SwitchyardContext"),
        .target(name: "SwitchyardMigration", dependencies: ["SwitchyardContext"], path: "Sources/SwitchyardMigration"),
        .target(
            name: "SwitchyardSplit",
            dependencies: ["SwitchyardSQLite", "SwitchyardLMDB", "SwitchyardMemory"],
            path: "Sources/SwitchyardSplit"
        ),
        .target(
            name: "Switchyard",
            dependencies: ["SwitchyardMigration", "SwitchyardSplit"],
            path: "Sources/Switchyard"
        ),
        // The PostgreSQL store: only this target imports PostgresNIO.
        .target(
            name: "SwitchyardPostgreSQL",
            dependencies: [
                "SwitchyardCoordinator", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/SwitchyardPostgreSQL"
        ),
        // What the command-line tools share (the terminal progress bar).
        .target(
            name: "ToolSupport",
            dependencies: [
                "Switchyard", .target(name: "SwitchyardPostgreSQL", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/ToolSupport"
        ),
        .executableTarget(
            name: "storesplit",
            dependencies: ["Switchyard", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/storesplit"
        ),
        .executableTarget(
            name: "storefile",
            dependencies: ["Switchyard", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/storefile"
        ),
        .executableTarget(
            name: "storeinspect",
            // SwitchyardPostgreSQL only with the PostgreSQL trait: the codegen build plugin runs storeinspect.
            dependencies: ["Switchyard", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/storeinspect"
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                "Switchyard", "CLMDB", "SwitchyardDifferential", "SwitchyardPostgreSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/bench"
        ),
        // The demo's model with its generated entity types (the SwitchyardCodegen plugin at work).
        .target(
            name: "MessengerSchema",
            dependencies: ["Switchyard"],
            path: "Schemas",
            exclude: ["MessengerLegacy.xcdatamodeld"],
            resources: [.copy("Messenger.xcdatamodeld")],
            plugins: ["SwitchyardCodegen"]
        ),
        .executableTarget(
            name: "demo",
            dependencies: ["Switchyard", "MessengerSchema", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/demo"
        ),
        // Xcode's codegen for SwiftPM: EntityObject types from a target's .xcdatamodeld, through storeinspect codegen.
        .plugin(name: "SwitchyardCodegen", capability: .buildTool(), dependencies: ["storeinspect"], path: "Plugins/SwitchyardCodegen"),
        // The child process the LMDB crash test kills mid-transaction (a test cannot SIGKILL itself).
        .executableTarget(
            name: "lmdb-crash-helper",
            dependencies: ["Switchyard", "SwitchyardPostgreSQL", "SwitchyardDifferential"],
            path: "Tests/LMDBCrashHelper"
        ),
        .testTarget(
            name: "SwitchyardTests",
            dependencies: ["Switchyard", "SwitchyardPostgreSQL", "SwitchyardDifferential", .product(name: "Logging", package: "swift-log")],
            path: "Tests/SwitchyardTests",
            // Inputs that once crashed the library, read from their source path (Support/Reproducers.swift).
            exclude: ["Reproducers"]
        ),
        // Seeded randomized differential testing of SQLite, LMDB and memory against a plain-Swift reference,
        // through the public API only: run briefly by the tests, at length by `bench --differential N`.
        .target(
            name: "SwitchyardDifferential",
            dependencies: ["Switchyard", "SwitchyardPostgreSQL"],
            path: "Tests/Differential"
        ),
        // What a user can do: tests that see only the public API (no @testable import is possible here).
        .testTarget(
            name: "SwitchyardAPITests",
            dependencies: [
                "Switchyard", "SwitchyardPostgreSQL", "SwitchyardDifferential", "MessengerSchema",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SwitchyardAPITests",
            resources: [.copy("Shop.xcdatamodeld")],
            plugins: ["SwitchyardCodegen"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (Tools/Fuzz), declared only when SWITCHYARD_FUZZ=1 so the ordinary build and CI never
// compile them; `bash Tools/fuzz.sh TARGET SECONDS` builds them with -sanitize=fuzzer,address in .build/fuzz.
if ProcessInfo.processInfo.environment["SWITCHYARD_FUZZ"] == "1" {
    package.targets += [
        .target(name: "CFuzzDriver", path: "Tools/Fuzz/CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver", "Switchyard"], path: "Tools/Fuzz/FuzzSupport"),
    ]
    for name in ["predicate", "modelxml", "plist", "deflate", "sqlite", "lmdb"] {
        package.targets.append(.executableTarget(
            name: "fuzz-\(name)", dependencies: ["Switchyard", "FuzzSupport"], path: "Tools/Fuzz/\(name)"))
    }
}
