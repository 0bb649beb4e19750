import ArgumentParser
import Foundation

// MARK: - Argument errors

extension ParsableCommand {
    /// The tools' `main()`: parses and runs the command, and reports what argument-parser finds wrong with the
    /// arguments (a missing value, an unknown option, a failed `validate()`) the way the tools report every other
    /// failure, `tool: arguments failed: <reason>` with exit status 64, instead of argument-parser's `Error:`
    /// and usage block. Help, version and the commands' own exit codes pass through unchanged.
    public static func mainReportingArgumentErrors(tool: String) {
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            guard !(error is ExitCode), exitCode(for: error) == .validationFailure else { exit(withError: error) }
            let help = ([tool] + subcommandNames(in: CommandLine.arguments.dropFirst())).joined(separator: " ")
            FileHandle.standardError.write(Data("\(tool): arguments failed: \(message(for: error))\nRun '\(help) --help' for usage.\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var running = command
            try running.run()
        } catch {
            exit(withError: error)
        }
    }

    /// The subcommands `arguments` start with (`codegen` in `storeinspect codegen m.xcdatamodeld`), so the hint
    /// after an argument error names the help that lists that subcommand's arguments.
    private static func subcommandNames(in arguments: ArraySlice<String>) -> [String] {
        var names: [String] = []
        var command: ParsableCommand.Type = Self.self
        for argument in arguments {
            guard let sub = command.configuration.subcommands.first(where: { $0._commandName == argument }) else { break }
            names.append(argument)
            command = sub
        }
        return names
    }
}
