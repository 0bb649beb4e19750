import Foundation
import Switchyard
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - ProgressBar

/// A one-line progress bar on stderr (entity, percentage, rows/s, ETA), redrawn at most ten times a second.
/// Only shown when stderr is a terminal, so logs and pipes stay clean.
public final class ProgressBar {
    private let started = Date()
    private var lastDraw = Date.distantPast

    /// A bar when stderr is a terminal, else nil.
    public static func onTerminal() -> ProgressBar? { isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil }

    public func update(_ progress: SplitProgress) {
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 || progress.rowsCopied == progress.rowCount else { return }
        lastDraw = now
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(progress.rowsCopied) / elapsed
        let fraction = progress.rowCount > 0 ? Double(progress.rowsCopied) / Double(progress.rowCount) : 1
        let width = 24
        let filled = min(width, Int(fraction * Double(width)))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let remaining = rate > 0 ? Double(progress.rowCount - progress.rowsCopied) / rate : 0
        let percent = String(format: "%3.0f%%", fraction * 100)
        let line = "\r[\(bar)] \(percent) \(progress.configuration).\(progress.entity) "
            + "\(progress.entityRowsCopied)/\(progress.entityRowCount)  \(Int(rate)) rows/s  ETA \(Self.duration(remaining))\u{1B}[K"
        FileHandle.standardError.write(Data(line.utf8))
    }

    public func finish() { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }

    private static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
