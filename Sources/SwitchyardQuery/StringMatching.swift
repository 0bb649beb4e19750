import Foundation

// MARK: - StringMatching

/// String comparisons with NSPredicate's options. The in-memory evaluator and the SQLite store (as a SQL
/// function) both call this, so `[c]`, `[d]` and `LIKE` give the same answers on every backend.
package enum StringMatching {
    /// Folds case and/or diacritics as `[c]`/`[d]` ask.
    public static func fold(_ s: String, _ options: ComparisonOptions) -> String {
        var fold: String.CompareOptions = []
        if options.contains(.caseInsensitive) { fold.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
        return fold.isEmpty ? s : s.folding(options: fold, locale: nil)
    }

    /// Evaluates a string operator (`==`, `!=`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, and the
    /// ordering operators) between `lhs` and `rhs`.
    public static func matches(_ op: ComparisonOperator, _ lhs: String, _ rhs: String, options: ComparisonOptions) -> Bool {
        let l = fold(lhs, options)
        let r = fold(rhs, options)
        switch op {
        case .equal: return l == r
        case .notEqual: return l != r
        case .beginsWith: return l.hasPrefix(r)
        case .endsWith: return l.hasSuffix(r)
        case .contains: return r.isEmpty || l.contains(r)
        case .like: return like(Array(l.unicodeScalars), Array(r.unicodeScalars))
        case .less: return l.utf8.lexicographicallyPrecedes(r.utf8)
        case .lessOrEqual: return !r.utf8.lexicographicallyPrecedes(l.utf8)
        case .greater: return r.utf8.lexicographicallyPrecedes(l.utf8)
        case .greaterOrEqual: return !l.utf8.lexicographicallyPrecedes(r.utf8)
        case .between, .in: return false
        }
    }

    /// `LIKE` with `*` (any run) and `?` (one character); `\` escapes.
    package static func like(_ s: [Unicode.Scalar], _ p: [Unicode.Scalar]) -> Bool {
        var si = 0, pi = 0
        var starP = -1, starS = 0
        while si < s.count {
            if pi < p.count, p[pi] == "\\", pi + 1 < p.count, p[pi + 1] == s[si] {
                si += 1; pi += 2
            } else if pi < p.count, p[pi] == "?" || (p[pi] == s[si] && p[pi] != "*" && p[pi] != "\\") {
                si += 1; pi += 1
            } else if pi < p.count, p[pi] == "*" {
                starP = pi; starS = si; pi += 1
            } else if starP >= 0 {
                pi = starP + 1; starS += 1; si = starS
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
