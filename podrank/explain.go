package podrank

// Rule names the step of the deletion order that told two pods apart, as
// [Explain] reports it. The zero value, RuleNone, means no step did: the
// pods tie.
type Rule int

// The steps of the deletion order, in the order they are tried.
const (
	RuleNone         Rule = iota // no step told the pods apart
	RuleScheduled                // an unscheduled pod goes first
	RulePhase                    // Pending, then Unknown, then Running
	RuleReady                    // a pod that is not ready goes first
	RuleDeletionCost             // the lower pod-deletion-cost annotation goes first
	RuleRank                     // the higher rank (more co-located pods) goes first
	RuleReadyTime                // the more recently ready goes first (by log2 bucket and UID when Now is set)
	RuleRestarts                 // more container restarts go first
	RuleCreationTime             // the newer goes first (by log2 bucket and UID when Now is set)
)

// String returns a short description of the step, e.g. "not ready".
func (r Rule) String() string {
	switch r {
	case RuleNone:
		return "tie"
	case RuleScheduled:
		return "unscheduled"
	case RulePhase:
		return "earlier phase"
	case RuleReady:
		return "not ready"
	case RuleDeletionCost:
		return "lower deletion cost"
	case RuleRank:
		return "higher rank"
	case RuleReadyTime:
		return "ready more recently"
	case RuleRestarts:
		return "more restarts"
	case RuleCreationTime:
		return "newer"
	}
	return "unknown rule"
}

// Explain compares a and b as [Compare] does and also names the step of
// the order that decided: order is Compare's answer (< 0 when a is deleted
// first), rule the step that told them apart, RuleNone when they tie. A
// step may decide "equal" (two ready times in the same bucket with equal
// UIDs): order is then 0 and rule names that step. It never modifies the
// pods and is safe for concurrent use.
func Explain(a, b Ranked, opts Options) (order int, rule Rule) {
	if a.Pod == nil || b.Pod == nil {
		return Compare(a, b, opts), RuleNone
	}
	o := newOrder(opts)
	ka, kb := o.key(a.Pod, a.Rank), o.key(b.Pod, b.Rank)
	return o.decide(&ka, &kb)
}
