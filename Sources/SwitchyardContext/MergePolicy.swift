// MARK: - MergePolicy

/// How ``ObjectContext/mergeChanges(from:policy:)`` and, through ``ObjectContext/mergePolicy``, `save()` treat
/// an object that another save changed while this context holds unsaved changes to it: Core Data's merge
/// policies. Objects without unsaved changes always take the saved state, and objects whose rows were deleted
/// always leave the context (the row is gone).
public enum MergePolicy: Sendable, Hashable {
    /// `NSErrorMergePolicy`: such an object is a conflict. Nothing is merged and the merge throws
    /// `ContextError.mergeConflict` naming every conflicting object.
    case error
    /// `NSMergeByPropertyStoreTrumpMergePolicy`: a property both sides changed takes the saved value; this
    /// context's changes to other properties stay.
    case storeWins
    /// `NSMergeByPropertyObjectTrumpMergePolicy`: this context's changes stay over the saved state; properties it
    /// did not change take the saved values. Its next save writes its changes without a conflict.
    case contextWins
    /// `NSRollbackMergePolicy`: this context's changes to the object are dropped and it takes the saved state.
    case rollback
}
