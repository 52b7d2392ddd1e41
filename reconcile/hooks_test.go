package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// recHookLog records every hook call.
type recHookLog struct {
	batches []int
	skipped [][2]int
	victims []reconcile.Victim
	keys    []string
}

func (l *recHookLog) hooks() reconcile.Hooks {
	return reconcile.Hooks{
		CreateBatch: func(key string, size int) { l.keys = append(l.keys, key); l.batches = append(l.batches, size) },
		CreationsSkipped: func(key string, failed, notAttempted int) {
			l.keys = append(l.keys, key)
			l.skipped = append(l.skipped, [2]int{failed, notAttempted})
		},
		DeletionVictim: func(key string, v reconcile.Victim) { l.keys = append(l.keys, key); l.victims = append(l.victims, v) },
	}
}

func TestHooksCreate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		want        int32
		failCall    int // -1: none
		wantBatches []int
		wantSkipped [][2]int
	}{
		{"every batch reported, nothing skipped", 7, -1, []int{1, 2, 4}, nil},
		{"R-9.2 failed and never attempted creates reported", 10, 2, []int{1, 2}, [][2]int{{1, 7}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log recHookLog
			pods := &recPods{CreateErr: func(_ context.Context, _ *corev1.Pod, call int) error {
				if call == tc.failCall {
					return errRecQuota
				}
				return nil
			}}
			m := &reconcile.Manager{Pods: pods, Hooks: log.hooks()}
			_, _ = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(tc.want)), nil, nil)
			assert.Equal(t, tc.wantBatches, log.batches)
			assert.Equal(t, tc.wantSkipped, log.skipped)
			assert.Empty(t, log.victims)
			for _, k := range log.keys {
				assert.Equal(t, "default/web", k)
			}
		})
	}
}

// the deletion age ratio is a victim's age over the youngest
// ready pod's age, computed without dividing by zero.
func TestHooksDeletionAgeRatio(t *testing.T) {
	now := podtest.Epoch.Add(time.Hour)
	rs := recRS(0)
	ctl := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	created := func(ago time.Duration) podtest.Option { return podtest.Created(now.Add(-ago)) }
	ready := podtest.Ready(podtest.Epoch)
	type victim struct {
		ratio float64
		has   bool
		age   time.Duration
	}
	for _, tc := range []struct {
		name    string
		replica int32
		active  []*corev1.Pod
		want    map[string]victim
	}{
		{name: "ready victims get age / youngest ready age", replica: 1,
			active: []*corev1.Pod{
				podtest.New("old", ctl, ready, created(30*time.Minute)),
				podtest.New("young", ctl, ready, created(10*time.Minute)),
				podtest.New("notready", ctl, created(5*time.Minute)),
			},
			want: map[string]victim{
				"notready": {has: false, age: 5 * time.Minute},
				"young":    {ratio: 1, has: true, age: 10 * time.Minute},
			}},
		{name: "youngest ready pod created now: no ratio, no panic", replica: 0,
			active: []*corev1.Pod{
				podtest.New("old", ctl, ready, created(30*time.Minute)),
				podtest.New("new", ctl, ready, created(0)),
			},
			want: map[string]victim{
				"old": {has: false, age: 30 * time.Minute},
				"new": {has: false, age: 0},
			}},
		{name: "no ready pod: no ratio", replica: 0,
			active: []*corev1.Pod{podtest.New("a", ctl, created(time.Minute))},
			want:   map[string]victim{"a": {has: false, age: time.Minute}}},
		{name: "all go, in input order: ratio of the old pod is 3", replica: 0,
			active: []*corev1.Pod{
				podtest.New("old", ctl, ready, created(30*time.Minute)),
				podtest.New("young", ctl, ready, created(10*time.Minute)),
			},
			want: map[string]victim{
				"old":   {ratio: 3, has: true, age: 30 * time.Minute},
				"young": {ratio: 1, has: true, age: 10 * time.Minute},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log recHookLog
			rs := recRS(tc.replica)
			m := &reconcile.Manager{Pods: &recPods{}, Clock: fakeclock.New(now), Hooks: log.hooks()}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), tc.active, nil)
			require.NoError(t, err)
			require.Len(t, log.victims, len(tc.want))
			for i, v := range log.victims {
				assert.Same(t, out.Victims[i], v.Pod, "rank order")
				w, ok := tc.want[v.Pod.Name]
				require.True(t, ok, "unexpected victim %s", v.Pod.Name)
				assert.Equal(t, w.has, v.HasAgeRatio, v.Pod.Name)
				assert.InDelta(t, w.ratio, v.AgeRatio, 1e-9, v.Pod.Name)
				assert.Equal(t, w.age, v.Age, v.Pod.Name)
			}
			assert.Empty(t, log.batches)
		})
	}
}

// Victims refused as not owned are reported to the hook too.
func TestHooksNotOwnedVictim(t *testing.T) {
	var log recHookLog
	m := &reconcile.Manager{Pods: &recPods{}, Hooks: log.hooks()}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(0)), []*corev1.Pod{podtest.New("stray", podtest.ControlledBy(recOwnerMeta("other"), "ReplicaSet", "apps/v1"))}, nil)
	require.NoError(t, err)
	require.Len(t, out.NotOwned, 1)
	require.Len(t, log.victims, 1)
	assert.Same(t, out.NotOwned[0], log.victims[0].Pod)
}
