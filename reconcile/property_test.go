package reconcile_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// Issue 13's acceptance property, for the Controller's own wiring: every
// round of creates (and deletes) becomes satisfied by the events the
// Controller observes, never by the 5-minute expiry. The clock never moves,
// so nothing can expire; events arrive late, in order, and duplicated;
// replicas change at random; some creates fail (and are lowered). Every
// sync that finds its owner satisfied finds it Fulfilled (or without a
// record), and once the events are delivered the owner converges to the
// desired pods within a bounded number of syncs.
func TestPropertyRoundsSatisfiedByEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := cluster.New(cluster.Options{Seed: rapid.Uint64().Draw(t, "seed"), GracefulDeletion: true, Nodes: 2})
		rs := cluster.NewReplicaSet("default", "web", int32(rapid.IntRange(0, 10).Draw(t, "replicas")), map[string]string{"app": "web"})
		burst := rapid.IntRange(1, 4).Draw(t, "burst")
		cfg := reconcile.ReplicaSets()
		cfg.Cluster.Owners, cfg.Cluster.Pods = oneOwner{rs}, informerPods(c)
		cfg.Cluster.CachesSynced = alwaysSynced
		cfg.Cluster.PodClient = podClient{c.Client, &recPatcher{api: c.API}}
		noStatus(&cfg)
		cfg.Clock = c.Clock
		cfg.BurstReplicas = burst
		cfg.SetTrackCreations(rapid.Bool().Draw(t, "track"))
		ctrl, err := reconcile.NewController(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Informer.Handler = cluster.Handler{
			OnAdd:    func(p *corev1.Pod) { ctrl.PodAdded(p) },
			OnUpdate: func(o, p *corev1.Pod) { ctrl.PodUpdated(o, p) },
			OnDelete: func(p *corev1.Pod) { ctrl.PodDeleted(p) },
		}
		failEvery := rapid.IntRange(0, 4).Draw(t, "failEvery")
		c.Client.Faults.Create = func(call int, _ *corev1.Pod) cluster.Fault {
			if failEvery > 0 && call%failEvery == 0 {
				return cluster.FailBefore
			}
			return cluster.NoFault
		}
		sync := func() {
			res, err := ctrl.Sync(t.Context(), "default/web")
			if err != nil && res.ManageErr == nil || errors.Is(err, reconcile.ErrTerminal) {
				t.Fatalf("sync: %v", err)
			}
			if r := res.Expectations.Resolution; res.Expectations.Satisfied && r != expectations.Fulfilled && r != expectations.NoRecord {
				t.Fatalf("satisfied by %s, not by observed events", r)
			}
		}
		live := func() int {
			pods, _ := c.API.List()
			n := 0
			for _, p := range pods {
				if ref := cluster.ControllerOf(p); ref != nil && ref.UID == rs.UID && podrank.IsActive(p) {
					n++
				}
			}
			return n
		}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			switch rapid.SampledFrom([]string{"sync", "deliver", "duplicate", "scale", "kubelet"}).Draw(t, "action") {
			case "sync":
				sync()
			case "deliver":
				c.Informer.Deliver(rapid.IntRange(1, 5).Draw(t, "events"))
			case "duplicate":
				if n := c.Informer.Len(); n > 0 {
					c.Informer.Duplicate(rapid.IntRange(0, n-1).Draw(t, "dup"))
				}
			case "scale":
				r := int32(rapid.IntRange(0, 10).Draw(t, "to"))
				rs.Spec.Replicas = &r
			case "kubelet":
				c.Kubelet.Step()
			}
		}
		c.Client.Faults = cluster.Faults{}
		bound := 2*((10+burst-1)/burst) + 4
		for i := 0; ; i++ {
			c.Informer.DeliverAll()
			c.Kubelet.Step()
			c.Informer.DeliverAll()
			if live() == int(*rs.Spec.Replicas) && ctrl.Tracker().Satisfied("default/web") {
				return
			}
			if i == bound {
				snap, _ := ctrl.Tracker().Snapshot("default/web")
				t.Fatalf("no convergence after %d syncs without expiry: %d live, desired %d, %s", bound, live(), *rs.Spec.Replicas, snap)
			}
			sync()
		}
	})
}
