package reconcile

import "errors"

// ErrTerminal marks the errors of [Controller.Sync] that no retry can fix:
// an owner that Config.Describe rejects or that is invalid (no object,
// negative replicas), an invalid label selector, a malformed key.
// Test with errors.Is(err, ErrTerminal) and stop retrying the key (a
// client-go worker calls queue.Forget; a controller-runtime reconciler
// returns reconcile.TerminalError(err)). The key syncs again on the next
// event for it, e.g. when the owner is fixed.
//
// Upstream logs an invalid selector and returns nil and retries a
// malformed key forever; here both are reported once, as terminal.
var ErrTerminal = errors.New("reconcile: terminal error")

// terminalError wraps a permanent failure: errors.Is(e, ErrTerminal) holds,
// and errors.Is/As also reach the cause.
type terminalError struct{ err error }

func (e *terminalError) Error() string        { return e.err.Error() }
func (e *terminalError) Unwrap() error        { return e.err }
func (e *terminalError) Is(target error) bool { return target == ErrTerminal }

// terminal marks err as permanent; a nil err stays nil.
func terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}
