package clientgo

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/internal/synclog"
	"github.com/reconcilekit/reconcilekit/adapters/metrics"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Worker takes owner keys from Queue and syncs them, as upstream's
// ReplicaSet controller does: success → Forget; an error →
// AddRateLimited, except a [reconcile.ErrTerminal] error (an invalid owner
// or selector, a malformed key), which is dropped with Forget because
// retrying cannot help; the availability requeue (SyncResult.RequeueAfter)
// is added before Forget. A key is never synced by two goroutines at once
// (the workqueue's guarantee).
//
// Queue and Sync are required. Done, if set, is called after every sync
// (from the worker goroutine), e.g. for logging or metrics.
//
// Every sync is logged through klog's contextual logger (klog.FromContext
// of Run's ctx): one line at V(4) with the owner, what the sync did and
// its result; at V(2) a deferral (reconcile.ErrDeferred: the caches have
// not synced, or the consistency gate waits, with the cache that is
// behind); at the default level an owner whose spec is invalid (with the
// fields at fault), a sync that acted on expired expectations, and a
// failed sync (as upstream's workers report errors). No line per pod.
type Worker struct {
	Queue workqueue.TypedRateLimitingInterface[string]
	Sync  func(ctx context.Context, key string) (reconcile.SyncResult, error)
	Done  func(key string, res reconcile.SyncResult, err error)
	// Metrics, if set, receives every sync's result and duration
	// (metrics.Collector.ObserveSync).
	Metrics *metrics.Collector
	// Clock times the syncs for Metrics and the log; nil: real time.
	Clock reconcile.Clock
}

// Run syncs keys with workers goroutines (at least one) until ctx is done,
// then shuts the queue down and returns once every worker has finished its
// current key.
func (w Worker) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for w.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	w.Queue.ShutDown()
	wg.Wait()
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
