// MARK: - Switchyard

/// Library-wide constants.
public enum SwitchyardInfo {
    /// The library version the CLIs print with `--version` and stores record in their metadata.
    public static let version = "0.1.0"
}
