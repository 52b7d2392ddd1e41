// Package synclog writes the adapters' log lines about a sync: one line per
// sync at V(4), and at the default level only what an operator must see —
// a deferral by the consistency gate, a sync that acted on expired
// expectations, and (when the caller's framework does not log them
// already) failed syncs. Never a line per pod at the default level.
package synclog

import (
	"errors"
	"time"

	"github.com/go-logr/logr"

	"github.com/reconcilekit/reconcilekit/adapters/metrics"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Sync logs the sync of owner key that returned res and err after took.
// logErrors adds a default-level line for a failed sync (client-go's
// worker; controller-runtime logs "Reconciler error" itself).
func Sync(logger logr.Logger, key string, res reconcile.SyncResult, err error, took time.Duration, logErrors bool) {
	result := metrics.Result(err)
	var stale *expectations.StaleCacheError
	switch {
	case errors.As(err, &stale):
		logger.Info("Sync deferred: an informer cache is behind the controller's own writes; retrying with backoff",
			"owner", key, "resource", stale.Resource.String(), "cacheResourceVersion", stale.Read, "writtenResourceVersion", stale.Written)
	case result == metrics.ResultTerminal && logErrors:
		logger.Error(err, "Sync failed and will not be retried (invalid owner)", "owner", key)
	case result == metrics.ResultError && logErrors:
		logger.Error(err, "Sync failed; retrying with backoff", "owner", key)
	}
	if res.Managed && res.Expectations.Resolution == expectations.Expired {
		logger.Info("Expectations expired: the sync acted without observing every pod event it waited for",
			"owner", key, "pendingCreates", res.Expectations.Adds, "pendingDeletes", res.Expectations.Dels, "waited", res.Expectations.Age)
	}
	if v := logger.V(4); v.Enabled() {
		o := res.Outcome
		v.Info("Synced", "owner", key, "result", result, "action", action(res, err),
			"diff", res.Diff, "created", len(o.Created), "deleted", len(o.Deleted),
			"adopted", len(res.Adopted), "released", len(res.Released),
			"expectations", res.Expectations.Resolution.String(), "duration", took)
	}
}

// action names what the sync did or why it did nothing.
func action(res reconcile.SyncResult, err error) string {
	switch {
	case res.Owner.Key == "" && err == nil:
		return "forgotten" // the owner is gone
	case res.Owner.Key == "":
		return "none"
	case res.Deleting:
		return "count-only" // the owner is being deleted
	case !res.Satisfied:
		return "wait" // expectations pending
	case res.Outcome.Diff < 0:
		return "create"
	case res.Outcome.Diff > 0:
		return "delete"
	}
	return "status"
}
