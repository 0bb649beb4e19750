import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
import Switchyard

/// The command-line tools, run as built binaries (`swift build --build-tests` builds them next to the tests).
@Suite struct CLITests {
    static let binDirectory = Repository.url(".build/debug")

    struct Run { let status: Int32; let stdout: String; let stderr: String }

    static func run(_ tool: String, _ arguments: [String], in directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = binDirectory.appendingPathComponent(tool)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Starts `storesplit` with `arguments`, waits until its outputs exist under their temporary names in `dir`
    /// (the copy has begun; at most 30 s), waits `delay` microseconds more and kills it with SIGKILL. True when
    /// the kill stopped it before it finished.
    static func killSplitMidRun(_ arguments: [String], watching dir: URL, after delay: UInt32) throws -> Bool {
        let process = Process()
        process.executableURL = binDirectory.appendingPathComponent("storesplit")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Waiting for the files, not a fixed delay, keeps the kill inside the run however fast the machine is.
        let started = Date()
        while process.isRunning, Date().timeIntervalSince(started) < 30 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            if names.contains(where: { $0.contains("storesplit-partial") }) { break }
            usleep(500)
        }
        usleep(delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
    }

    static let built = ["storesplit", "storeinspect", "storefile"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: binDirectory.appendingPathComponent($0).path)
    }

    @Test(.enabled(if: built, "storesplit/storeinspect not built in .build/debug (run swift build first)"), arguments: ["storesplit", "storeinspect", "storefile"])
    func versionHelpAndErrorFormat(tool: String) throws {
        let version = try Self.run(tool, ["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == SwitchyardInfo.version)
        let help = try Self.run(tool, ["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: \(tool)"))
        // What argument-parser finds wrong reads as every other failure does: `tool: arguments failed: <reason>`.
        let bad = try Self.run(tool, ["--no-such-option"])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("\(tool): arguments failed: "), "\(bad.stderr)")
        #expect(bad.stderr.contains("--no-such-option"))
        let plain = try Self.run(tool, [])
        #expect(plain.status == 64, "no arguments is a usage error")
        #expect(plain.stderr.hasPrefix("\(tool): arguments failed: "), "\(plain.stderr)")
    }

    /// Argument-parser's own findings (a value that looks like an option, an extra argument) in the tools' format.
    @Test(.enabled(if: built, "storesplit/storeinspect not built in .build/debug (run swift build first)"))
    func argumentParserErrorsUseTheToolsFormat() throws {
        let negative = try Self.run("storesplit", ["x.sqlite", "--model", "m", "--store", "A=b.sqlite", "--batch-size", "-5"])
        #expect(negative.status == 64)
        #expect(negative.stderr.hasPrefix("storesplit: arguments failed: Missing value for '--batch-size <batch-size>'"), "\(negative.stderr)")
        #expect(!negative.stderr.contains("Error: "))
        let extra = try Self.run("storeinspect", ["frobnicate", "x.sqlite"])
        #expect(extra.status == 64)
        #expect(extra.stderr.hasPrefix("storeinspect: arguments failed: Unexpected argument 'x.sqlite'"), "\(extra.stderr)")
        #expect(extra.stderr.hasSuffix("Run 'storeinspect --help' for usage.\n"), "\(extra.stderr)")
        // An error inside a subcommand points to that subcommand's help, which lists its arguments.
        let sub = try Self.run("storefile", ["move"])
        #expect(sub.status == 64)
        #expect(sub.stderr == "storefile: arguments failed: Missing expected argument '<store>'\nRun 'storefile move --help' for usage.\n", "\(sub.stderr)")
        let codegen = try Self.run("storeinspect", ["codegen", "--bogus", "m.xcdatamodeld"])
        #expect(codegen.status == 64)
        #expect(codegen.stderr.hasSuffix("Run 'storeinspect codegen --help' for usage.\n"), "\(codegen.stderr)")
        let model = try Self.run("storesplit", ["x.sqlite", "--model", "/nope.xcdatamodeld", "--store", "A=b.sqlite"])
        #expect(model.status == 2)
        #expect(model.stderr.components(separatedBy: "/nope.xcdatamodeld").count == 2, "the path once: \(model.stderr)")
        // A model that does not parse, named by a relative path: the file the parser read, once, then why.
        let dir = TemporaryDirectory()
        let bundle = dir.url.appendingPathComponent("bad.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: false)
        try Data(#"<?xml version="1.0"?><model><entity/></model>"#.utf8).write(to: bundle.appendingPathComponent("contents"))
        let malformed = try Self.run("storesplit", ["x.sqlite", "--model", "bad.xcdatamodel", "--store", "A=b.sqlite"], in: dir.url)
        #expect(malformed.status == 2)
        #expect(malformed.stderr.hasPrefix("storesplit: load model failed: "), "\(malformed.stderr)")
        #expect(malformed.stderr.components(separatedBy: "bad.xcdatamodel").count == 2, "the path once: \(malformed.stderr)")
        #expect(malformed.stderr.contains("bad.xcdatamodel/contents (--model): "), "\(malformed.stderr)")
        #expect(malformed.stderr.contains("name"), "\(malformed.stderr)")
    }
}
