package expectations

import "time"

// Hooks are optional callbacks for metrics, so that the Tracker never logs.
// A nil field is skipped; the zero Hooks call nothing. Hooks run on the
// goroutine of the Tracker call that triggers them, with no Tracker lock held,
// so they may call the Tracker; they must be safe for concurrent use when the
// Tracker is used concurrently. The consistency gate's deferrals are
// reported by its own hook, GateOptions.Deferred. The per-pod tracker of
// package expectations/perpod takes the same Hooks, with rounds of its own
// (perpod.Options).
type Hooks struct {
	// Resolved is called once per round (the time from a Set or Expect call
	// to the next), by the first Check or Satisfied call that finds a round
	// that had pending expectations satisfied. r is Fulfilled, Expired or
	// ResolvedByEvidence; pending is the round's age at that call.
	Resolved func(key string, r Resolution, pending time.Duration)
}
