package reconcile

import (
	"errors"
	"fmt"
)

// ErrTerminal marks the errors of [Controller.Sync] that no retry can fix:
// an owner that Config.Describe rejects, an owner spec that fails
// [Owner.Validate] ([ErrInvalidSpec]), a cluster-scoped owner
// ([ErrClusterScoped]), a malformed key. Test with errors.Is(err,
// ErrTerminal) and stop retrying the key (a client-go worker calls
// queue.Forget; a controller-runtime reconciler returns
// reconcile.TerminalError(err)). The key syncs again on the next event for
// it, e.g. when the owner is fixed.
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

// ErrClusterScoped marks the terminal error of a [Controller.Sync] of a
// cluster-scoped owner (a key without a namespace): pods are namespaced,
// and such an owner's sync would list and adopt pods in every namespace
// while its creates, which take the owner's empty namespace, fail. The
// sync reads and writes nothing. errors.Is(err, ErrTerminal)
// holds too.
var ErrClusterScoped = errors.New("reconcile: cluster-scoped owners are not supported: pods are namespaced, so the owner must be too")

// ownerErr is an error of one owner's sync, whose message names the owner:
// "reconcile: owner <key>: <err>". It unwraps to err.
type ownerErr struct {
	key string
	err error
}

func (e *ownerErr) Error() string { return "reconcile: owner " + e.key + ": " + e.err.Error() }
func (e *ownerErr) Unwrap() error { return e.err }

// ownerErrorf is fmt.Errorf(format, args...) naming the owner key.
func ownerErrorf(key, format string, args ...any) error {
	return &ownerErr{key: key, err: fmt.Errorf(format, args...)}
}

// namesOwner reports whether err's own message already names its owner:
// the errors this package builds for one owner do, by type; an error of a
// pod client, or errors joined, do not.
func namesOwner(err error) bool {
	switch e := err.(type) {
	case *ownerErr, *stoppedError, *deferredError, *fencedError, *specError:
		return true
	case *terminalError:
		return namesOwner(e.err)
	}
	return false
}
