package clientgo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/internal/fenceretry"
	"github.com/reconcilekit/reconcilekit/adapters/internal/synclog"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Worker takes owner keys from Queue and syncs them, as upstream's
// ReplicaSet controller does: success → Forget; an error →
// AddRateLimited, except a [reconcile.ErrTerminal] error (an invalid owner,
// owner spec or selector, a malformed key, a cluster-scoped owner), which
// is dropped with Forget because retrying cannot help; the availability
// requeue (SyncResult.RequeueAfter) is added before Forget. A sync the
// fence refused ([reconcile.ErrFenced]: this replica may not write for now,
// e.g. a Lease renewal ran late) is Forgotten and added again after one
// second, past the rate limiter: retried with backoff, the owners that
// synced while the fence was closed would wait minutes after it opened
// again (beyond upstream, which has no fence). A deferred sync
// (reconcile.ErrDeferred) is an error here, retried with backoff. A key is
// never synced by two goroutines at once (the workqueue's guarantee).
//
// Synced lists the HasSynced funcs of the informers Sync reads:
// [Worker.Run] syncs nothing until every one of them reports true
// as upstream's controllers wait for their caches before
// starting their workers. Done, if set, is called after every sync (from
// the worker goroutine), e.g. for logging or metrics.
//
// Every sync is logged through klog's contextual logger (klog.FromContext
// of Run's ctx): one line at V(4) with the owner, what the sync did and
// its result; at V(2) a deferral (reconcile.ErrDeferred: the caches have
// not synced, or the consistency gate waits, with the cache that is
// behind); at the default level an owner whose spec is invalid (with the
// fields at fault), a sync that acted on expired expectations, and a
// failed sync (as upstream's workers report errors). No line per pod.
//
// Queue and Sync are required: the zero Worker is not usable. Call Run
// once per Queue (it shuts the queue down when it returns). Sync and Done
// are called from Run's worker goroutines at once, so they must be safe for
// concurrent use.
type Worker struct {
	Queue workqueue.TypedRateLimitingInterface[string]
	Sync  func(ctx context.Context, key string) (reconcile.SyncResult, error)
	// Synced are the informers' HasSynced funcs (for [ReplicaSets]: the pod
	// and ReplicaSet informers'). Nil or empty: Run does not wait, for a
	// caller that has waited itself; a Sync built with [CacheVersions]
	// still refuses to act on caches that have not synced
	// (reconcile.ErrNotSynced, retried with backoff).
	Synced []cache.InformerSynced
	Done   func(key string, res reconcile.SyncResult, err error)
	// Metrics, if set, receives every sync's result and duration
	// (telemetry.Collector.ObserveSync).
	Metrics *telemetry.Collector
	// Clock times the syncs for Metrics and the log; nil: real time.
	Clock reconcile.Clock
}

// Run waits until every func of Synced reports true, then syncs keys with
// workers goroutines (at least one) until ctx is done, then shuts the
// queue down and returns nil once every worker has finished its current
// key. If ctx is done before the caches have synced, Run syncs nothing,
// shuts the queue down, logs it and returns an error that wraps
// context.Cause(ctx): the only error Run returns. The wait and its end are
// logged at the default level through klog.FromContext(ctx).
func (w Worker) Run(ctx context.Context, workers int) error {
	workers = max(workers, 1)
	if len(w.Synced) > 0 {
		logger := klog.FromContext(ctx)
		logger.Info("Waiting for the informer caches to sync before the first sync")
		if !cache.WaitForCacheSync(ctx.Done(), w.Synced...) {
			w.Queue.ShutDown()
			err := fmt.Errorf("clientgo: Worker: the informer caches had not synced when the context ended; nothing was synced: %w", context.Cause(ctx))
			logger.Error(err, "Workers not started")
			return err
		}
		logger.Info("Informer caches synced; starting the workers", "workers", workers)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for w.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	w.Queue.ShutDown()
	wg.Wait()
	return nil
}

// next syncs one key; false when the queue is shut down.
func (w Worker) next(ctx context.Context) bool {
	key, quit := w.Queue.Get()
	if quit {
		return false
	}
	defer w.Queue.Done(key)
	start := w.now()
	res, err := w.Sync(ctx, key)
	took := w.now().Sub(start)
	w.Metrics.ObserveSync(res, err, took)
	synclog.Sync(klog.FromContext(ctx), key, res, err, took, true)
	if w.Done != nil {
		w.Done(key, res, err)
	}
	switch {
	case err == nil:
		if res.RequeueAfter > 0 {
			w.Queue.AddAfter(key, res.RequeueAfter)
		}
		w.Queue.Forget(key)
	case errors.Is(err, reconcile.ErrTerminal):
		w.Queue.Forget(key)
	case fenceretry.Is(err):
		// Not the key's failure: no backoff, no token of the shared bucket.
		w.Queue.Forget(key)
		w.Queue.AddAfter(key, fenceretry.After)
	default:
		w.Queue.AddRateLimited(key)
	}
	return true
}

func (w Worker) now() time.Time {
	if w.Clock == nil {
		return time.Now()
	}
	return w.Clock.Now()
}
