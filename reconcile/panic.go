package reconcile

import "github.com/reconcilekit/reconcilekit/internal/panics"

// repanic re-raises a panic of a PodControl call, recorded in set, on the
// caller's goroutine, after the expectations were corrected for every call
// that did not succeed. The value is raised unchanged; the stack of the
// goroutine that panicked, which that value cannot carry, goes to
// h.Panicked first.
func (h *Hooks) repanic(key string, set *panics.Set) {
	if _, v, stack, ok := set.Panicked(); ok && h.Panicked != nil {
		h.Panicked(key, v, stack)
	}
	set.Repanic()
}
