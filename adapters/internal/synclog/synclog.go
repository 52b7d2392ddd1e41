// Package synclog writes the adapters' log lines about a sync: one line per
// sync at V(4); at V(2) a deferral (the informer caches have not synced
// yet, or the consistency gate waits for them to reach the controller's own
// writes), a normal wait that is retried with backoff, and a sync the fence
// refused (retried a second later; whoever keeps the fence logs why it
// closed); and at the default
// level only what an operator must see — an owner whose spec is invalid
// (terminal: the message names the field), a sync that acted on expired
// expectations, and (when the caller's framework does not log them
// already) failed syncs. Never a line per pod at the default level.
package synclog

import (
	"errors"
	"time"

	"github.com/go-logr/logr"

	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// DeferralLevel is the verbosity of the line about a deferred sync: below
// the default level, since a deferral is expected (after a start, and after
// the controller's own writes) and retried with backoff.
const DeferralLevel = 2

// Sync logs the sync of owner key that returned res and err after took.
// logErrors adds a default-level line for a failed sync, an invalid owner
// spec included (client-go's worker; controller-runtime logs "Reconciler
// error" itself, terminal errors included).
func Sync(logger logr.Logger, key string, res reconcile.SyncResult, err error, took time.Duration, logErrors bool) {
	result := telemetry.Result(err)
	switch {
	case result == telemetry.ResultDeferred:
		deferred(logger.V(DeferralLevel), key, err)
	case errors.Is(err, reconcile.ErrFenced):
		if v := logger.V(DeferralLevel); v.Enabled() {
			v.Info("Sync fenced: this replica may not write for now; retrying in a second", "owner", key, "reason", err.Error())
		}
	case errors.Is(err, reconcile.ErrInvalidSpec) && logErrors:
		logger.Error(err, "Owner spec is invalid: no pod touched, the failure condition written; not retried until the owner changes", "owner", key)
	case result == telemetry.ResultTerminal && logErrors:
		logger.Error(err, "Sync failed and will not be retried (invalid owner)", "owner", key)
	case result == telemetry.ResultError && logErrors:
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

// deferred logs why a sync was deferred.
func deferred(logger logr.Logger, key string, err error) {
	if !logger.Enabled() {
		return
	}
	var stale *expectations.StaleCacheError
	switch {
	case errors.As(err, &stale):
		logger.Info("Sync deferred: an informer cache is behind the controller's own writes; retrying with backoff",
			"owner", key, "resource", stale.Resource.String(), "cacheResourceVersion", stale.Read, "writtenResourceVersion", stale.Written)
	case errors.Is(err, reconcile.ErrNotSynced):
		logger.Info("Sync deferred: the informer caches have not synced yet; retrying with backoff", "owner", key)
	default:
		logger.Info("Sync deferred; retrying with backoff", "owner", key, "reason", err.Error())
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
	case !res.Expectations.Satisfied:
		return "wait" // expectations pending
	case res.Outcome.Diff < 0:
		return "create"
	case res.Outcome.Diff > 0:
		return "delete"
	}
	return "status"
}
