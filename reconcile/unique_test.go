package reconcile_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// with a repeated entry: ManageReplicas ignores nil and repeated
// entries of active (a documented difference beyond upstream), so a repeat
// never makes it delete a pod it should keep.
func TestManageReplicasRepeatsNeverDeleteTooMany(t *testing.T) {
	rs := recRS(1)
	owned := recOwned(rs, 2)
	for name, active := range map[string][]*corev1.Pod{
		"a pointer twice":               {owned[0], owned[1], owned[1]},
		"a copy with the same key":      {owned[0], owned[1], owned[0].DeepCopy()},
		"every pod twice and a nil pod": {owned[0], nil, owned[1], owned[0], owned[1]},
	} {
		t.Run(name, func(t *testing.T) {
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
			require.NoError(t, err)
			assert.Equal(t, 1, out.Diff)
			assert.Len(t, pods.deletes(), 1)
			assert.Empty(t, pods.creates())
		})
	}
}

// a Config.Pods that lists a pod more than once (the same
// object, a copy, or an orphan copy of it as two index lookups around a
// release can see it) never makes Sync's manage step create or delete more
// pods than the distinct pods call for: repeats are dropped before
// deleting, and counted twice before creating (so fewer are created, as
// Pods documents).
func TestSyncRepeatedPodsNeverCreateOrDeleteTooMany(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		replicas := rapid.IntRange(0, 6).Draw(rt, "replicas")
		rs := recRS(int32(replicas))
		distinct := labelled(recOwned(rs, rapid.IntRange(0, 6).Draw(rt, "pods")))
		listed := slices.Clone(distinct)
		for range rapid.IntRange(0, 6).Draw(rt, "repeats") {
			if len(distinct) == 0 {
				break
			}
			p := distinct[rapid.IntRange(0, len(distinct)-1).Draw(rt, "repeated")]
			switch rapid.IntRange(0, 2).Draw(rt, "form") {
			case 1: // the same pod read again
				p = p.DeepCopy()
			case 2: // read again after a release: an orphan, adopted back
				p = p.DeepCopy()
				p.OwnerReferences = nil
			}
			at := rapid.IntRange(0, len(listed)).Draw(rt, "at")
			listed = slices.Insert(listed, at, p)
		}
		r := newRecController(t, newRecOwners(rs), listed, noStatus)
		_, err := r.Sync(context.Background(), "default/web")
		if err != nil {
			rt.Fatalf("sync: %v", err)
		}
		creates, deletes := len(r.control.creates()), len(r.control.deletes())
		if limit := max(replicas-len(distinct), 0); creates > limit {
			rt.Fatalf("%d creates for %d distinct pods of %d replicas", creates, len(distinct), replicas)
		}
		if want := max(len(distinct)-replicas, 0); deletes != want {
			rt.Fatalf("%d deletes, want %d (%d distinct pods, %d replicas)", deletes, want, len(distinct), replicas)
		}
		if keys := r.control.deletes(); len(slices.Compact(slices.Sorted(slices.Values(keys)))) != len(keys) {
			rt.Fatalf("a pod deleted twice: %v", keys)
		}
	})
}

// The cases the property covers, by name: without the check before
// deleting, each would delete one pod too many.
func TestSyncRepeatedPodBeforeDeleting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int32
		listed   func(p []*corev1.Pod) []*corev1.Pod
		deletes  int
	}{
		{"in place, one pod listed twice", 2, func(p []*corev1.Pod) []*corev1.Pod { return []*corev1.Pod{p[0], p[1], p[1]} }, 0},
		{"one too many, one pod listed twice", 1, func(p []*corev1.Pod) []*corev1.Pod { return []*corev1.Pod{p[0], p[1], p[0].DeepCopy()} }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.replicas)
			r := newRecController(t, newRecOwners(rs), tc.listed(labelled(recOwned(rs, 2))), noStatus)
			_, err := r.Sync(context.Background(), "default/web")
			require.NoError(t, err)
			assert.Len(t, r.control.deletes(), tc.deletes)
			assert.Empty(t, r.control.creates())
		})
	}
}
