package reconcile_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func TestManageReplicasDeletes(t *testing.T) {
	t0 := podtest.Epoch
	rs := recRS(0)
	ctl := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	other := podtest.New("other-owner")
	other.UID = "uid-other"
	cases := []struct {
		name        string
		want        int32
		burst       int
		active      []*corev1.Pod
		related     []*corev1.Pod
		deleteErr   map[string]error
		wantVictims []string
		wantNotOwn  []string
		wantGone    []string
		wantFailed  []string
		wantDels    int // pending deletions afterwards
		wantErr     error
	}{
		{name: "R-9.3 not-ready pods go before ready ones (R-6.3)", want: 1,
			active: []*corev1.Pod{
				podtest.New("a", ctl, podtest.Ready(t0)),
				podtest.New("b", ctl, podtest.NotReady()),
			},
			wantVictims: []string{"default/b"}, wantDels: 1},
		{name: "R-9.3 every pod goes in input order (R-7.3)", want: 0,
			active: []*corev1.Pod{
				podtest.New("a", ctl, podtest.Ready(t0)),
				podtest.New("b", ctl, podtest.NotReady()),
				podtest.New("c", ctl),
			},
			wantVictims: []string{"default/a", "default/b", "default/c"}, wantDels: 3},
		{name: "R-9.3 ranks come from related pods: the crowded node goes first (R-6.5, R-7.1)", want: 1,
			active: []*corev1.Pod{
				podtest.New("a", ctl, podtest.Node("n1")),
				podtest.New("b", ctl, podtest.Node("n2")),
			},
			related: []*corev1.Pod{
				podtest.New("x", podtest.Node("n2")),
				podtest.New("y", podtest.Node("n2")),
				podtest.New("z", podtest.Node("n1")),
			},
			wantVictims: []string{"default/b"}, wantDels: 1},
		{name: "R-1.3 burst caps the deletes of one call", want: 0, burst: 2,
			active: []*corev1.Pod{
				podtest.New("a", ctl),
				podtest.New("b", ctl, podtest.Phase(corev1.PodPending)),
				podtest.New("c", ctl, podtest.Created(t0.Add(30*time.Minute))),
			},
			wantVictims: []string{"default/b", "default/c"}, wantDels: 2},
		{name: "R-9.3 NotFound is swallowed and lowered", want: 0,
			active:      []*corev1.Pod{podtest.New("a", ctl), podtest.New("b", ctl)},
			deleteErr:   map[string]error{"default/a": recNotFound("a")},
			wantVictims: []string{"default/a", "default/b"}, wantGone: []string{"default/a"}, wantDels: 1},
		{name: "R-9.3 other failures are lowered and returned", want: 0,
			active:      []*corev1.Pod{podtest.New("a", ctl), podtest.New("b", ctl)},
			deleteErr:   map[string]error{"default/b": errRecQuota},
			wantVictims: []string{"default/a", "default/b"}, wantFailed: []string{"default/b"}, wantDels: 1, wantErr: errRecQuota},
		{name: "safety: a pod controlled by another owner is never deleted", want: 0,
			active: []*corev1.Pod{
				podtest.New("a", ctl),
				podtest.New("b", podtest.ControlledBy(other, "ReplicaSet", "apps/v1")),
			},
			wantVictims: []string{"default/a", "default/b"}, wantNotOwn: []string{"default/b"}, wantDels: 1},
		{name: "an orphan (no controller ref) passed as active is deleted, as upstream", want: 0,
			active:      []*corev1.Pod{podtest.New("a")},
			wantVictims: []string{"default/a"}, wantDels: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs.Spec.Replicas = &tc.want
			pods := &recPods{DeleteErr: func(_ context.Context, p *corev1.Pod) error { return tc.deleteErr[reconcile.PodKey(p)] }}
			m := &reconcile.Manager{Pods: pods, BurstReplicas: tc.burst, Clock: fakeclock.New(t0.Add(time.Hour))}
			m.Tracker().ExpectCreations("default/web", 4) // ExpectDeletions zeroes it
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), tc.active, tc.related)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, len(tc.active)-int(tc.want), out.Diff)
			assert.Equal(t, len(tc.wantVictims), out.Expected)
			assert.Equal(t, tc.wantVictims, recKeys(out.Victims), "Victims")
			assert.Equal(t, tc.wantNotOwn, recNilIfEmpty(recKeys(out.NotOwned)), "NotOwned")
			assert.Equal(t, tc.wantGone, recNilIfEmpty(recKeys(out.Gone)), "Gone")
			assert.Equal(t, tc.wantFailed, recNilIfEmpty(recKeys(out.DeleteFailed)), "DeleteFailed")
			assert.Len(t, out.Deleted, len(tc.wantVictims)-len(tc.wantNotOwn)-len(tc.wantGone)-len(tc.wantFailed))
			assert.ElementsMatch(t, recKeys(append(append(append([]*corev1.Pod(nil), out.Deleted...), out.Gone...), out.DeleteFailed...)),
				pods.deletes(), "every owned victim, and only those, was deleted")
			recPending(t, m, "default/web", 0, tc.wantDels)
		})
	}
}

func recNilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// step 4: the victims' keys are expected before any delete call, so a
// delete event racing with the call counts; a failed delete is lowered
// through its key, which leaves the key set.
func TestManageReplicasExpectsDeletionKeysFirst(t *testing.T) {
	rs := recRS(0)
	active := recOwned(rs, 3)
	tracker := expectations.New(expectations.Options{})
	var mu sync.Mutex
	var seen []expectations.Snapshot
	pods := &recPods{DeleteErr: func(_ context.Context, p *corev1.Pod) error {
		s, _ := tracker.Snapshot("default/web")
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		if p.Name == "web-1" {
			return errRecQuota
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods, Expectations: tracker}
	_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
	require.ErrorIs(t, err, errRecQuota)
	require.Len(t, seen, 3)
	for _, s := range seen {
		assert.Equal(t, []string{"default/web-0", "default/web-1", "default/web-2"}, s.DeletionKeys)
	}
	after, ok := tracker.Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, []string{"default/web-0", "default/web-2"}, after.DeletionKeys)
	assert.Equal(t, 2, after.Dels)
	// The pods that were deleted count once when their events arrive.
	tracker.DeletionObserved("default/web", "default/web-0")
	tracker.DeletionObserved("default/web", "default/web-1") // lowered already: no-op
	tracker.DeletionObserved("default/web", "default/web-2")
	assert.True(t, tracker.Satisfied("default/web"))
}

// step 5: all deletes of a call are in flight at once. Each delete
// waits until every other one has started; issued one by one they would
// deadlock, which synctest reports.
func TestManageReplicasDeletesConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := recRS(0)
		active := recOwned(rs, 20)
		var mu sync.Mutex
		started := 0
		all := make(chan struct{})
		pods := &recPods{DeleteErr: func(context.Context, *corev1.Pod) error {
			mu.Lock()
			started++
			if started == len(active) {
				close(all)
			}
			mu.Unlock()
			<-all
			return nil
		}}
		m := &reconcile.Manager{Pods: pods}
		out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
		require.NoError(t, err)
		assert.Len(t, out.Deleted, 20)
	})
}

// Several failed deletes are joined in rank order.
func TestManageReplicasJoinsDeleteFailures(t *testing.T) {
	rs := recRS(0)
	active := recOwned(rs, 3)
	errs := map[string]error{"web-0": errors.New("zero"), "web-2": errors.New("two")}
	pods := &recPods{DeleteErr: func(_ context.Context, p *corev1.Pod) error { return errs[p.Name] }}
	m := &reconcile.Manager{Pods: pods}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
	require.Error(t, err)
	assert.Equal(t, "zero\ntwo", err.Error())
	assert.Len(t, out.DeleteFailed, 2)
	recPending(t, m, "default/web", 0, 1)
}

// The ranking's Now comes from the Manager's clock: two
// ready pods in the same log2 bucket are ordered by UID, whereas a zero Now
// would delete the more recently ready one first.
func TestManageReplicasRankingNowFromClock(t *testing.T) {
	rs := recRS(1)
	ctl := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	a := podtest.New("a", ctl, podtest.Ready(podtest.Epoch.Add(time.Second)))
	b := podtest.New("b", ctl, podtest.Ready(podtest.Epoch.Add(2*time.Second)))
	now := podtest.Epoch.Add(time.Hour)
	require.Negative(t, podrank.Compare(podrank.Ranked{Pod: a}, podrank.Ranked{Pod: b}, podrank.Options{Now: now}), "precondition: same bucket, UID a < b")
	require.Positive(t, podrank.Compare(podrank.Ranked{Pod: a}, podrank.Ranked{Pod: b}, podrank.Options{}), "precondition: zero Now, b more recent")

	m := &reconcile.Manager{Pods: &recPods{}, Clock: fakeclock.New(now)}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), []*corev1.Pod{a, b}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"default/a"}, recKeys(out.Victims))
}

// Ranking options pass through: with deletion cost disabled, the cost
// annotation does not protect a pod.
func TestManageReplicasRankingOptions(t *testing.T) {
	rs := recRS(1)
	ctl := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	cheap := podtest.New("cheap", ctl, podtest.DeletionCost("-5"), podtest.Created(podtest.Epoch))
	young := podtest.New("young", ctl, podtest.Created(podtest.Epoch.Add(time.Hour)))
	for _, tc := range []struct {
		name string
		opts reconcile.RankingOptions
		want string
	}{
		{"deletion cost on: lower cost first", reconcile.RankingOptions{}, "default/cheap"},
		{"deletion cost off: younger first", reconcile.RankingOptions{DisableDeletionCost: true}, "default/young"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &reconcile.Manager{Pods: &recPods{}, Clock: fakeclock.New(podtest.Epoch.Add(2 * time.Hour)), Ranking: tc.opts}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), []*corev1.Pod{cheap, young}, nil)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, recKeys(out.Victims))
		})
	}
}

// A panic in DeletePod reaches the caller after every delete returned, with
// its key lowered.
func TestManageReplicasDeletePanic(t *testing.T) {
	rs := recRS(0)
	active := recOwned(rs, 3)
	pods := &recPods{DeleteErr: func(_ context.Context, p *corev1.Pod) error {
		if p.Name == "web-1" {
			panic("boom")
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods}
	assert.PanicsWithValue(t, "boom", func() {
		_, _ = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
	})
	assert.Len(t, pods.deletes(), 3)
	s, ok := m.Tracker().Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, []string{"default/web-0", "default/web-2"}, s.DeletionKeys)
}

// ManageReplicas counts active as given, as upstream (diff = len(active) −
// replicas, R-9.1): filtering out
// terminating pods is the caller's job (Sync does it, R-10.5).
func TestManageReplicasCountsActiveAsGiven(t *testing.T) {
	rs := recRS(1)
	active := recOwned(rs, 2)
	ts := metav1.NewTime(podtest.Epoch)
	active[1].DeletionTimestamp = &ts
	m := &reconcile.Manager{Pods: &recPods{}}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, out.Diff)
}
