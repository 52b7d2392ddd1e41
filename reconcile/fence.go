package reconcile

import (
	"errors"
	"fmt"
	"sync"
)

// ErrFenced marks the errors of a call that stopped because its fence
// (Config.Fence, Manager.Fence) refused a write: this replica may no longer
// hold the leader lease, so it made no further create, delete, adoption,
// release or status write. Test with errors.Is(err, ErrFenced); errors.Is
// also reaches the fence's own reason. The error is not [ErrTerminal]: once
// the replica holds the lease again, a retry may succeed; a replica that has
// lost it for good normally exits.
//
// Upstream has no such check (docs/rules.md, R-13.1).
var ErrFenced = errors.New("reconcile: fenced: this replica may no longer write")

// fencedError reports one refused write: errors.Is finds both ErrFenced and
// the fence's reason.
type fencedError struct {
	key    string
	what   string
	reason error
}

func (e *fencedError) Error() string {
	return fmt.Sprintf("reconcile: owner %s: fenced before %s, no further write made: %v", e.key, e.what, e.reason)
}

func (e *fencedError) Unwrap() []error { return []error{ErrFenced, e.reason} }

// checkFence asks fence whether this replica may still write, just before
// the write named what ("creating a pod", "writing status") for owner key.
// A nil fence always allows; a refusal with a nil reason cannot happen (nil
// means allowed).
func checkFence(fence func() error, key, what string) error {
	if fence == nil {
		return nil
	}
	if reason := fence(); reason != nil {
		return &fencedError{key: key, what: what, reason: reason}
	}
	return nil
}

// fenceGate asks a fence before each write of one call (a ManageReplicas, a
// claim) and remembers the first refusal: after it, every later write of
// that call is refused without asking again, so that a fence that opens
// again cannot let a half-stopped call go on. The zero fenceGate (no
// fence) allows everything. It is safe for concurrent use by the call's
// goroutines.
type fenceGate struct {
	fence func() error
	key   string

	mu  sync.Mutex
	err error // the first refusal
}

// allow returns nil when the write named what may be made, else the
// refusal (the first one of the call). The fence is asked under the lock,
// so concurrent writes ask it one at a time and none slips past a refusal.
func (g *fenceGate) allow(what string) error {
	if g.fence == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	g.err = checkFence(g.fence, g.key, what)
	return g.err
}

// refusal returns the first refusal, nil when every write was allowed.
func (g *fenceGate) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
