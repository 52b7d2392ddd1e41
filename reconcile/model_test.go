package reconcile_test

import (
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// A model-based test of the Controller's bookkeeping across owners that
// come and go (issue 13: "deleting an owner forgets everything about it").
// Random schedules create, scale, delete and recreate (same name, new UID)
// up to three ReplicaSets, sync them, and deliver, duplicate and delay pod
// events, with lost create responses under tracked creations (so names of
// unconfirmed creations are remembered). The model is the set of owners
// that exist. After every step:
//   - the Controller holds no expectations for an owner that does not exist
//     (its delete event was handled): a late event of its pods cannot
//     resolve, and a Sync of its key forgets;
//   - Len never exceeds the number of existing owners;
//   - no Sync fails with ErrTerminal.
//
// At the end every owner is deleted and its key synced once (the request
// OwnerDeleted returns): Len is 0. Half the schedules run the consistency
// gate on the informer's version: no record of the controller's
// writes survives its owner either, and a deferred sync is simply retried
// by a later step.
func TestModelOwnersComeAndGo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := cluster.New(cluster.Options{Seed: rapid.Uint64().Draw(t, "seed"), GracefulDeletion: rapid.Bool().Draw(t, "graceful")})
		owners := newRecOwners()
		cfg := reconcile.ReplicaSets()
		cfg.Cluster.Owners, cfg.Cluster.Pods = owners, informerPods(c)
		cfg.Cluster.CachesSynced = alwaysSynced
		cfg.Cluster.PodClient = podClient{c.Client, &recPatcher{api: c.API}}
		noStatus(&cfg)
		cfg.Clock = c.Clock
		cfg.SetTrackCreations(rapid.Bool().Draw(t, "track"))
		cfg.BurstReplicas = rapid.IntRange(1, 3).Draw(t, "burst")
		// Issue 15: with the pod cache's version the consistency gate
		// records the creates and adoptions; its records must not
		// leak either.
		if rapid.Bool().Draw(t, "gate") {
			cfg.Cluster.CacheVersions.Pods = c.Informer.LastSyncResourceVersion
		}
		ctrl, err := reconcile.NewController(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Informer.Handler = cluster.Handler{
			OnAdd:    func(p *corev1.Pod) { ctrl.PodAdded(p) },
			OnUpdate: func(o, p *corev1.Pod) { ctrl.PodUpdated(o, p) },
			OnDelete: func(p *corev1.Pod) { ctrl.PodDeleted(p) },
		}
		lostEvery := rapid.IntRange(0, 3).Draw(t, "lostEvery")
		c.Client.Faults.Create = func(call int, _ *corev1.Pod) cluster.Fault {
			if lostEvery > 0 && call%lostEvery == 0 {
				return cluster.LoseResponse
			}
			return cluster.NoFault
		}

		names := []string{"a", "b", "c"}
		exists := map[string]*appsv1.ReplicaSet{}
		incarnation := 0
		newRS := func(name string) *appsv1.ReplicaSet {
			incarnation++
			rs := cluster.NewReplicaSet("default", name, int32(rapid.IntRange(0, 4).Draw(t, "replicas")), map[string]string{"app": name})
			rs.UID = types.UID(fmt.Sprintf("uid-%s-%d", name, incarnation))
			return rs
		}
		check := func(action string) {
			n := 0
			for _, name := range names {
				if exists[name] != nil {
					n++
					continue
				}
				if _, _, ok := ctrl.Tracker().Pending("default/" + name); ok {
					t.Fatalf("after %s: expectations remain for deleted owner %s", action, name)
				}
				if rv, ok := ctrl.Gate().Written("default/"+name, expectations.PodsResource); ok {
					t.Fatalf("after %s: a record of writes (RV %s) remains for deleted owner %s", action, rv, name)
				}
			}
			if l := ctrl.Len(); l > n {
				t.Fatalf("after %s: Len %d > %d existing owners", action, l, n)
			}
		}
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			action := rapid.SampledFrom([]string{"create", "scale", "delete", "recreate", "sync", "sync", "deliver", "duplicate", "kubelet"}).Draw(t, "action")
			name := rapid.SampledFrom(names).Draw(t, "owner")
			old := exists[name]
			switch action {
			case "create":
				if old == nil {
					rs := newRS(name)
					owners.set(rs)
					exists[name] = rs
					ctrl.OwnerAdded(rs)
				}
			case "scale":
				if old != nil {
					rs := old.DeepCopy()
					r := int32(rapid.IntRange(0, 4).Draw(t, "to"))
					rs.Spec.Replicas = &r
					owners.set(rs)
					exists[name] = rs
					ctrl.OwnerUpdated(old, rs)
				}
			case "delete":
				if old != nil {
					owners.remove(old)
					delete(exists, name)
					ctrl.OwnerDeleted(old)
				}
			case "recreate":
				if old != nil {
					rs := newRS(name)
					owners.set(rs)
					exists[name] = rs
					ctrl.OwnerUpdated(old, rs)
				}
			case "sync":
				res, err := ctrl.Sync(t.Context(), "default/"+name)
				var stale *expectations.StaleCacheError
				if errors.As(err, &stale) {
					break // deferred by the gate: retried later
				}
				if errors.Is(err, reconcile.ErrTerminal) || (err != nil && res.ManageErr == nil) {
					t.Fatalf("sync %s: %v", name, err)
				}
			case "deliver":
				c.Informer.Deliver(rapid.IntRange(1, 6).Draw(t, "events"))
			case "duplicate":
				if n := c.Informer.Len(); n > 0 {
					c.Informer.Duplicate(rapid.IntRange(0, n-1).Draw(t, "dup"))
				}
			case "kubelet":
				c.Kubelet.Step()
			}
			check(action + " " + name)
		}
		for _, name := range names {
			if rs := exists[name]; rs != nil {
				owners.remove(rs)
				delete(exists, name)
				ctrl.OwnerDeleted(rs)
			}
		}
		c.Informer.DeliverAll()
		for _, name := range names {
			if _, err := ctrl.Sync(t.Context(), "default/"+name); err != nil {
				t.Fatalf("sync of deleted %s: %v", name, err)
			}
		}
		check("deleting every owner")
		if l := ctrl.Len(); l != 0 {
			t.Fatalf("Len %d after every owner was deleted", l)
		}
	})
}
