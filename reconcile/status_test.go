package reconcile_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// The status step: Config.Status computes, Config.StatusWriter
// writes, and the Controller records the version the server answered
// — never one the user chose to return. Under the old
// WriteStatus, returning the cached owner after a successful write
// recorded the cached version and the gate stopped protecting that owner;
// the user no longer returns anything the library records.
func TestStatusStep(t *testing.T) {
	type step struct {
		name        string
		status      reconcile.StatusFunc[*appsv1.ReplicaSet]
		answer      func(next *appsv1.ReplicaSet) *appsv1.ReplicaSet // the writer's return
		wantErr     string
		wantWrites  int32
		wantWritten bool
		wantRV      string // recorded under replicasets
	}
	copyWithStatus := func(rs *appsv1.ReplicaSet, _ reconcile.SyncResult) (*appsv1.ReplicaSet, bool) {
		next := rs.DeepCopy()
		next.Status.Replicas = 7
		return next, true
	}
	server := func(next *appsv1.ReplicaSet) *appsv1.ReplicaSet {
		out := next.DeepCopy()
		out.ResourceVersion = "77" // the server's new version
		return out
	}
	for _, tc := range []step{
		{name: "R-10.9 written: the server's version is recorded, not the cached one", status: copyWithStatus, answer: server,
			wantWrites: 1, wantWritten: true, wantRV: "77"},
		{name: "R-8.6 skipped: no write, the cached version recorded as upstream",
			status: func(*appsv1.ReplicaSet, reconcile.SyncResult) (*appsv1.ReplicaSet, bool) { return nil, false },
			answer: server, wantRV: "60"},
		{name: "the cached owner itself is an error: it must not be modified",
			status: func(rs *appsv1.ReplicaSet, _ reconcile.SyncResult) (*appsv1.ReplicaSet, bool) { return rs, true },
			answer: server, wantErr: "the Config.Status func returned the cached owner itself", wantRV: "none"},
		{name: "a write of no object is an error",
			status: func(*appsv1.ReplicaSet, reconcile.SyncResult) (*appsv1.ReplicaSet, bool) { return nil, true },
			answer: server, wantErr: "the Config.Status func asked for a write and returned no object", wantRV: "none"},
		{name: "a writer answering nothing is an error", status: copyWithStatus,
			answer:     func(*appsv1.ReplicaSet) *appsv1.ReplicaSet { return nil },
			wantErr:    "the Config.Cluster.StatusWriter returned no object and no error",
			wantWrites: 1, wantRV: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var writes atomic.Int32
			g := newGateRig(t, 0, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Status = tc.status
				cfg.Cluster.StatusWriter = statusFunc[*appsv1.ReplicaSet](func(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
					writes.Add(1)
					return tc.answer(next), nil
				})
			})
			cached := g.rs.DeepCopy()
			res, err := g.Sync(t.Context(), gateKey)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, "reconcile: owner default/web: writing status: "+tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantWrites, writes.Load())
			assert.Equal(t, tc.wantWritten, res.StatusWritten)
			if tc.wantWritten {
				require.NotNil(t, res.Written)
				assert.Equal(t, "77", res.Written.GetResourceVersion())
			} else {
				assert.Nil(t, res.Written)
			}
			assert.Equal(t, tc.wantRV, written(t, g.Gate(), rsResource))
			assert.True(t, equality.Semantic.DeepEqual(cached, g.rs), "the cached owner is never modified")
		})
	}
}

// ReplicaSetStatus, the Status ReplicaSets() sets, is upstream's
// computation: nothing to write when the status is already right,
// otherwise a copy whose observedGeneration is the generation acted on
// the cached ReplicaSet is never modified.
func TestReplicaSetStatus(t *testing.T) {
	now := podtest.Epoch
	rs := recRS(2)
	rs.Generation = 3
	ctl := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	match := podtest.Labels(map[string]string{"app": "web"})
	res := reconcile.SyncResult{Active: []*corev1.Pod{podtest.New("a", ctl, match), podtest.New("b", ctl, match)}, Now: now}
	before := rs.DeepCopy()

	next, write := reconcile.ReplicaSetStatus(status.Options{})(rs, res)
	require.True(t, write, "R-8.6: the status changed")
	require.NotSame(t, rs, next)
	assert.Equal(t, int32(2), next.Status.Replicas)
	assert.Equal(t, int64(3), next.Status.ObservedGeneration, "R-8.7: the generation acted on")
	assert.Equal(t, before, rs, "never modifies rs")

	again, write := reconcile.ReplicaSetStatus(status.Options{})(next, res)
	assert.False(t, write, "R-8.6: already written")
	assert.Nil(t, again)
	assert.NotNil(t, reconcile.ReplicaSets().Status, "ReplicaSets() sets it")
}

// NewController rejects the opt-ins that cannot work together, and the
// options it would overwrite, naming them (issue 26).
func TestNewControllerRejectsUnworkableCombinations(t *testing.T) {
	for _, tc := range []struct {
		name string
		tune func(*reconcile.Config[*appsv1.ReplicaSet])
		want string
	}{
		{"Exact needs the pod cache's version", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Expectations.Exact = true },
			"Config.Expectations.Exact without Config.Cluster.CacheVersions.Pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := reconcile.ReplicaSets()
			cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = newRecOwners(), &recPodList{}, podClient{&recPods{}, &recPatcher{}}
			cfg.Cluster.CachesSynced = alwaysSynced
			(&recStatus{}).use(&cfg)
			tc.tune(&cfg)
			c, err := reconcile.NewController(cfg)
			assert.Nil(t, c)
			require.ErrorContains(t, err, "reconcile: NewController: "+tc.want)
		})
	}
}

// Exact is one switch: tracked creations (the Controller names the pods)
// and EvidenceFirst fed by CacheVersions.Pods.
func TestExactIsTrackedCreationsWithEvidence(t *testing.T) {
	g := newGateRig(t, 2, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Expectations.Exact = true
		cfg.DisableConsistencyGate = true
	})
	_, err := g.Sync(t.Context(), gateKey)
	require.NoError(t, err)
	created := g.control.creates()
	require.Len(t, created, 2)
	for _, p := range created {
		assert.NotEmpty(t, p.Name, "tracked creations: named by the Controller")
	}
	g.podsRV.set("1")
	snap, _ := g.Tracker().Snapshot(gateKey)
	assert.Equal(t, expectations.WaitingForCache, snap.Resolution, "EvidenceFirst: the pod cache is behind the creates")
}
