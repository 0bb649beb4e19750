import Foundation
import Testing

@testable import Switchyard

/// I/O errors and a full disk at every write of a save, a migration and a split: `Tools/faultfs/faultfs.py` (a
/// pass-through FUSE file system) fails the N-th write or fsync with EIO or ENOSPC, for N = 1, 2, 3… until the
/// operation gets through.
/// After each failure the error must say what happened, and the store must reopen unchanged and take the
/// operation once the disk behaves.
@Suite(.serialized) struct IOErrorInjectionTests {
    static let script = Repository.url("Tools/faultfs/faultfs.py")

    /// FUSE, libfuse2 and fusepy are there (Tools/test.sh installs the last two), and we may mount.
    static let available: Bool = {
        guard FileManager.default.fileExists(atPath: "/dev/fuse"), getuid() == 0 || FileManager.default.fileExists(atPath: "/usr/bin/fusermount")
        else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // fusepy from pip is `fuse`; Debian's python3-fusepy is `fusepy` (Tools/faultfs/faultfs.py takes either).
        probe.arguments = ["python3", "-c", "try:\n import fuse\nexcept ImportError:\n import fusepy"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// A mounted faultfs over a fresh backing directory; unmounted when released.
    final class Mount {
        let backing = TemporaryDirectory()
        let point = TemporaryDirectory()
        private var process: Process?
        var control: URL { point.url.appendingPathComponent(".faultfs") }

        init() throws { try mount() }

        deinit { unmount() }

        private func mount() throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", IOErrorInjectionTests.script.path, backing.url.path, point.url.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            let deadline = Date().addingTimeInterval(30)   // a loaded 2-core machine can take seconds
            while !FileManager.default.fileExists(atPath: control.path), Date() < deadline { usleep(20_000) }
            guard FileManager.default.fileExists(atPath: control.path) else { throw Failure("faultfs did not mount") }
        }

        /// Unmounts and waits for faultfs to end, never forever. A fresh-clone run once hung here: the mount was
        /// still there after `fusermount -u -z`, and faultfs ignored SIGTERM (a child started by Foundation's
        /// `Process` from a test thread inherits that thread's blocked signals; faultfs now unblocks them). So
        /// SIGTERM has a deadline, then SIGKILL, and a second `fusermount` clears what a killed daemon leaves.
        private func unmount() {
            guard let process else { return }
            self.process = nil
            /// Whether `fusermount -u -z` succeeded.
            @discardableResult
            func fusermount() -> Bool {
                let unmount = Process()
                unmount.executableURL = URL(fileURLWithPath: "/usr/bin/fusermount")
                unmount.arguments = ["-u", "-z", point.url.path]
                unmount.standardOutput = FileHandle.nullDevice
                unmount.standardError = FileHandle.nullDevice
                do {
                    try unmount.run()
                    unmount.waitUntilExit()
                    return unmount.terminationStatus == 0
                } catch {
                    Issue.record("fusermount -u -z \(point.url.path) did not start: \(error)")
                    return false
                }
            }
            func ended(within seconds: Double) -> Bool {
                let deadline = Date().addingTimeInterval(seconds)
                while process.isRunning, Date() < deadline { usleep(20_000) }
                return !process.isRunning
            }
            let unmounted = fusermount()
            process.terminate()
            if !ended(within: 3) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            // A daemon that ended before its mount went leaves a dead mount behind.
            if !unmounted { fusermount() }
        }

        /// Unmounts and mounts again: the kernel's cached pages of the mount are gone, so what is read next is
        /// what reached the backing files (as after a restart), not pages a failed write left in the cache.
        func remount() throws {
            unmount()
            try mount()
        }

        func arm(_ n: Int, _ fault: Fault) throws { try Data("\(fault.rawValue) \(n)\n".utf8).write(to: control) }
        func disarm() throws { try Data("off\n".utf8).write(to: control) }
        /// (writes and fsyncs seen since the last command, failures injected).
        func status() throws -> (operations: Int, failed: Int) {
            let text = try String(contentsOf: control, encoding: .utf8)
            var fields: [String: Int] = [:]
            for part in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let pair = part.split(separator: "=")
                if pair.count == 2 { fields[String(pair[0])] = Int(pair[1]) }
            }
            return ((fields["writes"] ?? 0) + (fields["fsyncs"] ?? 0), fields["failed"] ?? 0)
        }
    }

    /// What the armed write fails with.
    enum Fault: String, CaseIterable, Sendable {
        /// EIO: a device error.
        case fail
        /// ENOSPC: the disk is full.
        case full
    }

    /// Every backend with every fault.
    static let cases: [(String, Fault)] = ["sqlite", "lmdb"].flatMap { backend in Fault.allCases.map { (backend, $0) } }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func model(version: Int = 1) throws -> ObjectModel {
        var attributes = [AttributeDescription(name: "n", type: .integer64, isIndexed: true), AttributeDescription(name: "text", type: .string)]
        if version == 2 { attributes.append(AttributeDescription(name: "rank", type: .integer64, isOptional: false, defaultValue: 5, isIndexed: true)) }
        return try ObjectModel(entities: [EntityDescription(name: "Row", attributes: attributes)])
    }

    static func open(_ backend: String, _ url: URL, model: ObjectModel, readOnly: Bool = false) throws -> any PersistentStore {
        backend == "sqlite"
            ? try SQLiteStore(url: url, model: model, configuration: "Default", options: readOnly ? .readOnly : .default)
            : try LMDBStore(url: url, model: model, configuration: "Default", options: readOnly ? .readOnly : .default)
    }

    /// Every row's (key, n, text), sorted: what "unchanged" compares.
    static func content(_ store: any PersistentStore) throws -> [String] {
        try store.fetch(StoreFetchRequest(entityName: "Row")).map { "\($0.primaryKey):\($0["n"]):\($0["text"]):\($0["rank"])" }.sorted()
    }

    static func seed(_ backend: String, _ url: URL) throws {
        let store = try open(backend, url, model: try model())
        let keys = try store.allocatePrimaryKeys(for: "Row", count: 300)
        try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Row", primaryKey: $0, values: ["n": .integer($0), "text": .string("row \($0)")]) }))
    }

    static func copy(_ from: URL, _ to: URL) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: from.path + suffix) {
            try FileManager.default.copyItem(atPath: from.path + suffix, toPath: to.path + suffix)
        }
    }

    /// Whether the error says what went wrong: an I/O error, or a full disk.
    static func saysWhatFailed(_ error: Error, _ fault: Fault) -> Bool {
        let text = "\(error)"
        switch fault {
        case .fail:
            // LMDB reports a write that failed while it initializes a file as ENOSPC.
            return text.contains("I/O error") || text.contains("Input/output error") || text.contains("No space left")
        case .full:
            // faultfs's disk is not really full (statvfs passes through), so the free-space diagnosis that
            // DiskFullTests checks on a full tmpfs cannot show here, and a failed fsync reaches LMDB as EIO.
            return text.contains("No space left") || text.contains("disk is full") || text.contains("no space left")
                || text.contains("I/O error") || text.contains("Input/output error")
        }
    }

    /// Fails the 1st, 2nd, … write of `operation` on a fresh copy of the seeded store until one run gets
    /// through with nothing failed; returns how many write points were failed.
    static func everyWriteFails(
        _ backend: String, _ fault: Fault, mount: Mount,
        operation: (URL) throws -> Void, check: (URL, _ failed: Bool, _ baseline: [String]) throws -> Void
    ) throws -> Int {
        let ext = backend == "sqlite" ? "sqlite" : "lmdb"
        let template = mount.point.url.appendingPathComponent("template.\(ext)")
        try seed(backend, template)
        let baseline = try content(try open(backend, template, model: try model(), readOnly: true))
        for n in 1...400 {
            let work = mount.point.url.appendingPathComponent("work-\(n).\(ext)")
            try copy(template, work)
            try mount.arm(n, fault)
            var threw: Error?
            do { try operation(work) } catch { threw = error }
            let status = try mount.status()
            try mount.disarm()
            try mount.remount()
            if let threw {
                guard saysWhatFailed(threw, fault) else { throw Failure("write \(n) (\(fault)): the error does not say what failed: \(threw)") }
                try check(work, true, baseline)
            } else {
                try check(work, false, baseline)
                if status.failed == 0 { return n - 1 }
            }
        }
        throw Failure("the operation never got through 400 failed writes")
    }

    @Test(.enabled(if: available, "needs /dev/fuse, libfuse2 and python3's fusepy"), arguments: cases)
    func ioErrorsDuringASaveLeaveTheStoreUnchanged(backend: String, fault: Fault) throws {
        let mount = try Mount()
        let points = try Self.everyWriteFails(backend, fault, mount: mount) { url in
            let store = try Self.open(backend, url, model: try Self.model())
            let keys = try store.allocatePrimaryKeys(for: "Row", count: 100)
            try store.save(StoreChangeSet(
                inserts: keys.map { StoreRow(entityName: "Row", primaryKey: $0, values: ["n": .integer($0), "text": .string(String(repeating: "x", count: 300))]) },
                updates: (1...50).map { RowUpdate(entityName: "Row", primaryKey: $0, expectedVersion: 1, values: ["text": .string("updated")]) },
                deletes: (51...60).map { RowDeletion(entityName: "Row", primaryKey: $0, expectedVersion: 1) }))
        } check: { url, failed, baseline in
            let store = try Self.open(backend, url, model: try Self.model())
            let content = try Self.content(store)
            if failed {
                guard content == baseline else {
                    let differing = zip(content, baseline).first { $0 != $1 }.map { "\($0.0) was \($0.1)" } ?? "counts differ"
                    throw Failure("after a failed save the store changed (\(content.count) rows; \(differing))")
                }
            } else {
                guard content.count == 390 else { throw Failure("after the save: \(content.count) rows, want 390") }
            }
            // Usable: a write goes through.
            let key = try store.allocatePrimaryKeys(for: "Row", count: 1).lowerBound
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Row", primaryKey: key, values: ["n": .integer(-1)])]))
        }
        #expect(points >= 2, "the save made \(points) writes")
    }

    @Test(.enabled(if: available, "needs /dev/fuse, libfuse2 and python3's fusepy"), arguments: cases)
    func ioErrorsDuringAMigrationLeaveTheOldStore(backend: String, fault: Fault) throws {
        let mount = try Mount()
        let points = try Self.everyWriteFails(backend, fault, mount: mount) { url in
            _ = try Self.open(backend, url, model: try Self.model(version: 2))
        } check: { url, failed, baseline in
            if failed {
                let old = try Self.open(backend, url, model: try Self.model())
                guard try old.storedModel() == Self.model(), try Self.content(old) == baseline else {
                    throw Failure("after a failed migration the store is not the old one")
                }
            }
            let migrated = try Self.open(backend, url, model: try Self.model(version: 2))
            guard try migrated.count(StoreFetchRequest(entityName: "Row", predicate: try FetchPredicate(format: "rank == 5"))) == 300 else {
                throw Failure("the migration, run again, did not give every row its default")
            }
        }
        #expect(points >= 2, "the migration made \(points) writes")
    }

    @Test(.enabled(if: available, "needs /dev/fuse, libfuse2 and python3's fusepy"), arguments: cases)
    func ioErrorsDuringASplitLeaveNoOutput(backend: String, fault: Fault) throws {
        let mount = try Mount()
        let target = try ObjectModel(
            entities: try Self.model().entities, configurations: [ConfigurationDescription(name: "Main", entityNames: ["Row"])])
        let points = try Self.everyWriteFails(backend, fault, mount: mount) { url in
            let out = URL(fileURLWithPath: url.path + ".out.\(backend)")
            let splitter = try StoreSplitter(
                source: url, targetModel: target,
                destinations: [SplitDestination(configuration: "Main", url: out, type: backend == "sqlite" ? .sqlite : .lmdb)])
            _ = try splitter.run(try splitter.plan(), options: SplitOptions(batchSize: 50, verifyContent: true))
        } check: { url, failed, _ in
            let out = URL(fileURLWithPath: url.path + ".out.\(backend)")
            if failed, FileManager.default.fileExists(atPath: out.path) { throw Failure("a failed split left \(out.lastPathComponent)") }
            if !failed {
                let store = try Self.open(backend, out, model: target, readOnly: true)
                guard try store.count(StoreFetchRequest(entityName: "Row")) == 300 else { throw Failure("the split output lacks rows") }
            }
        }
        #expect(points >= 2, "the split made \(points) writes")
    }
}
