package reconcile_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// asyncInformer delivers a cluster API's events to a Controller from its
// own goroutine, in order, as a shared informer does, keeping a cache the
// Controller lists. Safe for concurrent use.
type asyncInformer struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []cluster.Event
	cache   map[string]*corev1.Pod
	handled int // events delivered so far
	emitted int // events the API emitted so far
	stopped bool
}

func newAsyncInformer(api *cluster.API) *asyncInformer {
	in := &asyncInformer{cache: map[string]*corev1.Pod{}}
	in.cond = sync.NewCond(&in.mu)
	api.Watch(func(e cluster.Event) { // called with the API's lock held: only queue
		in.mu.Lock()
		in.queue = append(in.queue, e)
		in.emitted++
		in.mu.Unlock()
		in.cond.Broadcast()
	})
	return in
}

// run delivers events to c until stop is called.
func (in *asyncInformer) run(c *reconcile.Controller[*appsv1.ReplicaSet]) {
	for {
		in.mu.Lock()
		for len(in.queue) == 0 && !in.stopped {
			in.cond.Wait()
		}
		if in.stopped {
			in.mu.Unlock()
			return
		}
		e := in.queue[0]
		in.queue = in.queue[1:]
		old := in.cache[e.Key()]
		if e.Type == cluster.Deleted {
			delete(in.cache, e.Key())
		} else {
			in.cache[e.Key()] = e.Pod
		}
		in.mu.Unlock()
		switch {
		case e.Type == cluster.Deleted:
			c.PodDeleted(e.Pod)
		case old == nil:
			c.PodAdded(e.Pod)
		default:
			c.PodUpdated(old, e.Pod)
		}
		in.mu.Lock()
		in.handled++
		in.mu.Unlock()
		in.cond.Broadcast()
	}
}

func (in *asyncInformer) stop() {
	in.mu.Lock()
	in.stopped = true
	in.mu.Unlock()
	in.cond.Broadcast()
}

// caughtUp reports whether every event emitted so far was handled.
func (in *asyncInformer) caughtUp() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.handled == in.emitted
}

func (in *asyncInformer) List(namespace string) ([]*corev1.Pod, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range in.cache {
		if p.Namespace == namespace {
			out = append(out, p)
		}
	}
	return out, nil
}

// The Controller is safe for concurrent use: pod events from an informer
// goroutine, Syncs of different owners from several workers (one Sync per
// key at a time, as a workqueue guarantees), owner deletions from another
// goroutine. Every owner converges, each round of creates is satisfied by
// observed events (the clock never moves: no expiry), and after the owners
// are deleted the Controller holds nothing (Len 0). Run with -race.
func TestControllerConcurrent(t *testing.T) {
	for _, track := range []bool{false, true} {
		t.Run(fmt.Sprintf("track=%v", track), func(t *testing.T) {
			const owners, workers = 6, 3
			c := cluster.New(cluster.Options{Seed: 7})
			informer := newAsyncInformer(c.API)
			// Every fifth create fails before the API: lowered, retried.
			c.Client.Faults.Create = func(call int, _ *corev1.Pod) cluster.Fault {
				if call%5 == 4 {
					return cluster.FailBefore
				}
				return cluster.NoFault
			}
			var rss []*appsv1.ReplicaSet
			for i := range owners {
				name := fmt.Sprintf("rs-%d", i)
				rss = append(rss, cluster.NewReplicaSet("default", name, int32(3+i), map[string]string{"app": name}))
			}
			own := newRecOwners(rss...)
			cfg := reconcile.ReplicaSets()
			cfg.Cluster.Owners, cfg.Cluster.Pods = own, informer
			cfg.Cluster.CachesSynced = alwaysSynced
			cfg.Cluster.PodClient = podClient{c.Client, &recPatcher{api: c.API}}
			noStatus(&cfg)
			cfg.Clock = c.Clock // never stepped: nothing can expire
			cfg.SetTrackCreations(track)
			cfg.BurstReplicas = 2
			ctrl, err := reconcile.NewController(cfg)
			require.NoError(t, err)

			var bg, wg sync.WaitGroup
			bg.Go(func() { informer.run(ctrl) })
			converged := func(rs *appsv1.ReplicaSet) bool {
				key := reconcile.OwnerKey(rs.Namespace, rs.Name)
				if !informer.caughtUp() || !ctrl.Tracker().Satisfied(key) {
					return false
				}
				pods, _ := c.API.List()
				n := 0
				for _, p := range pods {
					if ref := cluster.ControllerOf(p); ref != nil && ref.UID == rs.UID && podrank.IsActive(p) {
						n++
					}
				}
				return n == int(*rs.Spec.Replicas)
			}
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					// Worker w owns the keys i with i%workers == w: one Sync
					// per key at a time. Between rounds it waits for the
					// informer to deliver something. Bounded: a stall fails.
					for range 1000 {
						done := true
						for i := w; i < owners; i += workers {
							rs := rss[i]
							if converged(rs) {
								continue
							}
							done = false
							_, err := ctrl.Sync(t.Context(), reconcile.OwnerKey(rs.Namespace, rs.Name))
							if errors.Is(err, reconcile.ErrTerminal) {
								errs <- err
								return
							}
						}
						if done {
							return
						}
						informer.waitProgress()
					}
					errs <- fmt.Errorf("worker %d: no convergence", w)
				})
			}
			// Meanwhile another goroutine reads snapshots, as metrics do.
			wg.Go(func() {
				for range 100 {
					for _, rs := range rss {
						ctrl.Tracker().Snapshot(reconcile.OwnerKey(rs.Namespace, rs.Name))
					}
					ctrl.Len()
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				informer.stop()
				bg.Wait()
				t.Fatal(err)
			}
			for i := range owners {
				require.True(t, converged(rss[i]), "owner %d", i)
			}

			// Delete every owner while the informer still delivers events.
			var del sync.WaitGroup
			for _, rs := range rss {
				del.Go(func() {
					own.remove(rs)
					ctrl.OwnerDeleted(rs)
				})
			}
			del.Wait()
			// The request OwnerDeleted returned: its Sync finds the owner gone.
			for _, rs := range rss {
				res, err := ctrl.Sync(t.Context(), reconcile.OwnerKey(rs.Namespace, rs.Name))
				require.NoError(t, err)
				assert.Zero(t, res)
			}
			informer.stop()
			bg.Wait()
			assert.Equal(t, 0, ctrl.Len(), "nothing remains for deleted owners")
		})
	}
}

// waitProgress blocks until the informer has handled every event emitted
// so far (or is stopped).
func (in *asyncInformer) waitProgress() {
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.handled != in.emitted && !in.stopped {
		in.cond.Wait()
	}
}
