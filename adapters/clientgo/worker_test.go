package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
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
	go func() { assert.NoError(t, clientgo.Worker{Queue: q, Sync: syncFn}.Run(ctx, 2)); close(stopped) }()
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

// A worker that is never given synced caches syncs nothing: Run returns,
// once ctx ends, an error that wraps ctx's cause, and shuts the queue down
//
func TestWorkerRunEndsBeforeTheCachesSync(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	q.Add("ns/a")
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("shutting down")
	var syncs atomic.Int32
	w := clientgo.Worker{
		Queue: q,
		Sync: func(context.Context, string) (reconcile.SyncResult, error) {
			syncs.Add(1)
			return reconcile.SyncResult{}, nil
		},
		// The wait has begun once it asks: end the context then.
		Synced: []cache.InformerSynced{func() bool { cancel(stop); return false }},
	}
	err := w.Run(ctx, 2)
	require.Error(t, err)
	assert.ErrorIs(t, err, stop)
	assert.ErrorContains(t, err, "clientgo: Worker: the informer caches had not synced")
	assert.Zero(t, syncs.Load(), "nothing synced")
	assert.True(t, q.ShuttingDown())
}

// heldListWatch is a pod ListWatch whose list and watch wait until release
// is closed, so that its informer cannot sync before.
type heldListWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported makes a reflector list, then watch:
// from client-go v0.35 it would first try a watch list, which the fake
// cluster does not serve.
func (heldListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// heldPodInformer builds, for informers.SharedInformerFactory.InformerFor,
// a pod informer over heldListWatch.
func heldPodInformer(release <-chan struct{}) func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
	return func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		wait := func(ctx context.Context) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				if err := wait(ctx); err != nil {
					return nil, err
				}
				return client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				if err := wait(ctx); err != nil {
					return nil, err
				}
				return client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, opts)
			},
		}
		return cache.NewSharedIndexInformer(heldListWatch{lw}, &corev1.Pod{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
}

// logLines is a logger at verbosity 2 that keeps what it writes; safe for
// concurrent use.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(_, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{Verbosity: 2})
}

// matching returns the lines that contain s.
func (l *logLines) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// counter returns the value of the counter name whose label has value v.
func counter(t *testing.T, reg *prometheus.Registry, name, label, v string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == v {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, v)
	return 0
}

// the probe of issue 32: a ReplicaSet of 3 whose 3 pods exist, and
// a pod informer whose first list is held back until a sync has run (or
// the worker is seen waiting) after the ReplicaSet informer has synced. A
// sync on the empty pod cache would create 3 more pods: 6 for replicas 3.
// Each guard alone keeps them at 3: Worker.Synced (the worker runs no sync
// before the caches have synced) and Cluster.CachesSynced (the Controller
// refuses with ErrNotSynced, a deferral retried with backoff, counted and
// logged at V(2), not at the default level).
func TestNoSyncBeforeTheCachesHaveSynced(t *testing.T) {
	tests := []struct {
		name              string
		workerWaits       bool // Worker.Synced is set
		controllerRefuses bool // Config.Cluster.CachesSynced is kept
	}{
		{"R-14.8 the worker waits for Synced", true, false},
		{"R-14.8 the Controller refuses while the caches have not synced", false, true},
		{"R-14.8 both, as ReplicaSets and the quick start wire them", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := fakecluster.New(1, fakecluster.Faults{})
			rs, err := cl.Clientset.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet("web", 3), metav1.CreateOptions{})
			require.NoError(t, err)
			for i := range 3 {
				p := podLike(fmt.Sprintf("web-%d", i), rs)
				p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
				_, err := cl.Clientset.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{})
				require.NoError(t, err)
			}

			release := make(chan struct{})
			var releaseOnce sync.Once
			releasePods := func() { releaseOnce.Do(func() { close(release) }) }
			factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
			pods := factory.InformerFor(&corev1.Pod{}, heldPodInformer(release))
			replicaSets := factory.Apps().V1().ReplicaSets().Informer()
			cfg := clientgo.ReplicaSets(cl.Clientset, factory, nil)
			if !tt.controllerRefuses {
				cfg.Cluster.CachesSynced = func() bool { return true } // the guard says yes: only the worker waits
			}
			cfg, collector := telemetry.Instrument(cfg, telemetry.Options{})
			reg := prometheus.NewPedanticRegistry()
			require.NoError(t, reg.Register(collector))
			ctrl, err := reconcile.NewController(cfg)
			require.NoError(t, err)
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
			require.NoError(t, clientgo.Register(ctrl, pods, replicaSets, q))

			var mu sync.Mutex
			var early []error // the errors of the syncs that began before the pod informer had synced
			converged := make(chan struct{})
			var convergedOnce sync.Once
			w := clientgo.Worker{Queue: q, Metrics: collector, Sync: func(ctx context.Context, key string) (reconcile.SyncResult, error) {
				podsSynced := pods.HasSynced()
				res, err := ctrl.Sync(ctx, key)
				switch {
				case !podsSynced && !pods.HasSynced(): // began and ended before the pods listed
					mu.Lock()
					early = append(early, err)
					mu.Unlock()
					releasePods() // the early sync has done what it does: let the pods list
				case !podsSynced: // the pods listed during the sync: it may have read either
				case err == nil:
					convergedOnce.Do(func() { close(converged) })
				}
				return res, err
			}}
			if tt.workerWaits {
				w.Synced = []cache.InformerSynced{replicaSets.HasSynced, func() bool {
					// Asked only once the ReplicaSets have synced: the
					// worker waits where it could have synced.
					releasePods()
					return pods.HasSynced()
				}}
			}

			var logs logLines
			ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logs.logger()))
			factory.Start(ctx.Done())
			stopped := make(chan struct{})
			go func() { defer close(stopped); assert.NoError(t, w.Run(ctx, 2)) }()
			select {
			case <-converged:
			case <-time.After(20 * time.Second): // hang guard
				t.Error("no successful sync after the pod informer synced")
			}
			cancel()
			releasePods()
			<-stopped
			factory.Shutdown()

			stats := cl.Stats()
			assert.Equal(t, 3, stats.PodsCreated, "only the test's 3 pods: the controller created none (6 without the guards)")
			assert.Zero(t, stats.PodsDeleted)
			list, err := cl.Clientset.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Equal(t, 3, len(list.Items), "pods in the cluster")

			mu.Lock()
			defer mu.Unlock()
			if tt.workerWaits {
				assert.Empty(t, early, "the worker ran no sync before the pod informer had synced")
			} else {
				require.NotEmpty(t, early, "the worker that does not wait synced before the pods listed: the probe ran")
			}
			for _, err := range early {
				assert.ErrorIs(t, err, reconcile.ErrNotSynced, "a sync before the pod informer synced refuses")
				assert.ErrorIs(t, err, reconcile.ErrDeferred)
				assert.NotErrorIs(t, err, reconcile.ErrTerminal, "retried, not dropped")
			}
			notSynced := counter(t, reg, telemetry.SyncDeferralsName, "reason", telemetry.DeferralNotSynced)
			if tt.workerWaits {
				assert.Zero(t, notSynced, "nothing deferred: the worker waited")
			} else {
				assert.GreaterOrEqual(t, notSynced, float64(len(early)), "the deferrals counted")
			}
			assert.Zero(t, counter(t, reg, telemetry.PodCreatesName, "result", "created"))
			for _, line := range logs.matching(`"msg"="Sync deferred`) {
				assert.Contains(t, line, `"level"=2`, "a deferral is logged below the default level")
			}
			assert.GreaterOrEqual(t, len(logs.matching(`"msg"="Sync deferred: the informer caches have not synced yet`)), len(early))
		})
	}
}

// A sync the fence refused is retried one second later, past the rate
// limiter: not backed off, and no token of the queue's shared bucket, so
// that owners synced while a Lease renewal ran late are synced again as soon
// as the fence opens (the bug: minutes of backoff after a 10 s closure).
// On the real clock: each key's syncs are at least a second apart (a bound
// AddAfter guarantees), and all are done well within the hang guard.
func TestWorkerRetriesAFencedSyncASecondLater(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var mu sync.Mutex
	at := map[string][]time.Time{} // each key's syncs
	done := make(chan string, 1000)
	syncFn := func(_ context.Context, key string) (reconcile.SyncResult, error) {
		mu.Lock()
		defer mu.Unlock()
		at[key] = append(at[key], time.Now())
		if len(at[key]) <= 3 { // the fence stays closed for three syncs of each key
			return reconcile.SyncResult{}, fmt.Errorf("reconcile: owner %s: fenced before writing status: %w", key, reconcile.ErrFenced)
		}
		done <- key
		return reconcile.SyncResult{}, nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { assert.NoError(t, clientgo.Worker{Queue: q, Sync: syncFn}.Run(ctx, 2)); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	// Far more owners than the bucket's burst of 100: with AddRateLimited
	// their retries would queue behind its 10 per second for 30 s.
	const owners = 300
	for i := range owners {
		q.Add(fmt.Sprintf("owner-%d", i))
	}
	for range owners {
		select {
		case <-done:
		case <-time.After(20 * time.Second): // hang guard
			t.Fatal("the keys were not synced through the fence once it opened")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range owners {
		k := fmt.Sprintf("owner-%d", i)
		require.Len(t, at[k], 4, "%s: three fenced syncs, then one through the open fence", k)
		for j := 1; j < 4; j++ {
			assert.GreaterOrEqual(t, at[k][j].Sub(at[k][j-1]), time.Second, "%s: sync %d came less than a second after the fenced one before it", k, j+1)
		}
		assert.Zero(t, q.NumRequeues(k), "%s: a fenced sync is not backed off", k)
	}
}
