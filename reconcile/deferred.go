package reconcile

import (
	"errors"
	"fmt"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// ErrDeferred marks the error of a [Controller.Sync] that read nothing and
// did nothing because the caches cannot be trusted yet: they have not
// synced ([ErrNotSynced]), or one is older than the controller's own last
// write for the owner (the consistency gate, R-10.9; errors.As then finds
// the *expectations.StaleCacheError). A deferral is normal, not a failure:
// it is not [ErrTerminal]; return it to the workqueue, which retries the key
// with rate limiting, and log it below the default level.
var ErrDeferred = errors.New("reconcile: sync deferred")

// ErrNotSynced marks a sync deferred because Cluster.CachesSynced reported
// that the informer caches have not loaded yet: errors.Is(err,
// ErrNotSynced) and errors.Is(err, ErrDeferred) hold. A sync on a pod cache
// that has not listed yet would see none of the owner's pods and create
// them all again.
var ErrNotSynced = errors.New("reconcile: the informer caches have not synced yet")

// deferredError is the error of a deferred sync: it names the owner once,
// says why, and matches [ErrDeferred] and its cause.
type deferredError struct {
	key   string
	cause error // ErrNotSynced or an *expectations.StaleCacheError
}

func (e *deferredError) Error() string {
	var stale *expectations.StaleCacheError
	if errors.As(e.cause, &stale) {
		return fmt.Sprintf("reconcile: owner %s: sync deferred: the %s cache is at resourceVersion %s, older than the controller's own write at %s",
			e.key, stale.Resource, stale.Read, stale.Written)
	}
	return fmt.Sprintf("reconcile: owner %s: sync deferred: the informer caches have not synced yet", e.key)
}

func (e *deferredError) Unwrap() []error { return []error{ErrDeferred, e.cause} }
