package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// success → Forget (after the availability AddAfter); an error →
// AddRateLimited; a terminal error → Forget, never retried.
func TestWorkerRetriesOnlyRetryableErrors(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var mu sync.Mutex
	calls := map[string]int{}
	done := make(chan struct{})
	syncFn := func(_ context.Context, key string) (reconcile.SyncResult, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[key]++
		switch {
		case key == "terminal":
			return reconcile.SyncResult{}, fmt.Errorf("bad owner: %w", reconcile.ErrTerminal)
		case key == "flaky" && calls[key] == 1:
			return reconcile.SyncResult{}, errors.New("try again")
		case key == "requeue" && calls[key] == 1:
			return reconcile.SyncResult{RequeueAfter: time.Millisecond}, nil
		}
		if calls["terminal"] == 1 && calls["flaky"] == 2 && calls["requeue"] == 2 {
			select {
			case <-done:
			default:
				close(done)
			}
		}
		return reconcile.SyncResult{}, nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { clientgo.Worker{Queue: q, Sync: syncFn}.Run(ctx, 2); close(stopped) }()
	for _, k := range []string{"terminal", "flaky", "requeue"} {
		q.Add(k)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second): // hang guard
		t.Fatal("keys were not synced as expected")
	}
	cancel()
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, calls["terminal"], "a terminal error is not retried")
	assert.Equal(t, 2, calls["flaky"], "an error is retried")
	assert.Equal(t, 2, calls["requeue"], "RequeueAfter syncs again")
	assert.Zero(t, q.NumRequeues("flaky"), "forgotten after its success")
	assert.True(t, q.ShuttingDown())
}
