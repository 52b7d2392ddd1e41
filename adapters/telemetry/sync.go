package telemetry

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Result classifies the error of [reconcile.Controller.Sync] into the
// result label's values: [ResultOK] for nil, [ResultDeferred] for a
// deferred sync ([Deferral] names why), [ResultTerminal] for a
// reconcile.ErrTerminal error (an owner whose spec fails Owner.Validate
// included), [ResultError] for any other.
func Result(err error) string {
	switch {
	case err == nil:
		return ResultOK
	case Deferral(err) != "":
		return ResultDeferred
	case errors.Is(err, reconcile.ErrTerminal):
		return ResultTerminal
	}
	return ResultError
}

// Deferral names why [reconcile.Controller.Sync] deferred the sync that
// returned err, as the reason label of SyncDeferralsName:
// [DeferralNotSynced] when the informer caches have not synced yet
// (reconcile.ErrNotSynced), [DeferralStaleCache] when the consistency gate
// waits for a cache to reach the controller's own writes (any other
// reconcile.ErrDeferred error, or an *expectations.StaleCacheError). It
// returns "" when err is not a deferral.
func Deferral(err error) string {
	var stale *expectations.StaleCacheError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, reconcile.ErrNotSynced):
		return DeferralNotSynced
	case errors.Is(err, reconcile.ErrDeferred), errors.As(err, &stale):
		return DeferralStaleCache
	}
	return ""
}

// ObserveSync records one sync: its result ([Result]) and duration took,
// the reason of a deferral ([Deferral]), and, when the manage step ran,
// the pod creates and deletes of its Outcome and whether it raised a round
// of expectations. Call it once per Controller.Sync with what Sync
// returned; clientgo.Worker and ctrlruntime.Reconciler do when their
// Metrics field is set. It is safe for concurrent use; on a nil Collector
// it does nothing.
func (c *Collector) ObserveSync(res reconcile.SyncResult, err error, took time.Duration) {
	if c == nil {
		return
	}
	result := Result(err)
	c.syncs.WithLabelValues(result).Inc()
	c.syncDuration.WithLabelValues(result).Observe(took.Seconds())
	if reason := Deferral(err); reason != "" {
		c.deferrals.WithLabelValues(reason).Inc()
	}
	if !res.Managed {
		return
	}
	o := res.Outcome
	add(c.creates, "created", len(o.Created))
	add(c.creates, "failed", o.CreateFailed)
	add(c.creates, "skipped", o.Skipped)
	add(c.creates, "namespace_terminating", o.NamespaceTerminating)
	add(c.creates, "already_existed", o.AlreadyExisted)
	add(c.deletes, "deleted", len(o.Deleted))
	add(c.deletes, "gone", len(o.Gone))
	add(c.deletes, "failed", len(o.DeleteFailed))
	add(c.deletes, "not_owned", len(o.NotOwned))
	if Raised(o) {
		c.raised.Inc()
	}
}

// add adds n to vec's series with result label, when n > 0.
func add(vec *prometheus.CounterVec, result string, n int) {
	if n > 0 {
		vec.WithLabelValues(result).Add(float64(n))
	}
}

// Raised reports whether the manage step that returned o started a round
// of expectations that must be observed before the owner's next sync acts:
// it expected creations, or the deletion of at least one pod it owns.
func Raised(o reconcile.Outcome) bool {
	switch {
	case o.Diff < 0:
		return o.Expected > 0
	case o.Diff > 0:
		return o.Expected-len(o.NotOwned) > 0
	}
	return false
}
