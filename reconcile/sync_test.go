package reconcile_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// recTickClock advances by one second after every reading, so a test can
// tell which reading a result came from.
type recTickClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *recTickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(time.Second)
	return t
}

func recList(pods ...*corev1.Pod) func(context.Context) ([]*corev1.Pod, error) {
	return func(context.Context) ([]*corev1.Pod, error) { return pods, nil }
}

// the expectations are checked before the pods are read, so a
// creation observed in between does not let this sync act on a list that
// misses the pod.
func TestSyncChecksExpectationsBeforeListing(t *testing.T) {
	rs := recRS(1)
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods}
	m.Tracker().ExpectCreations("default/web", 1)
	res, err := m.Sync(context.Background(), reconcile.SyncRequest{
		Owner: reconcile.ReplicaSetOwner(rs),
		Pods: func(context.Context) ([]*corev1.Pod, error) {
			m.Tracker().CreationObserved("default/web") // the add event races the sync
			return nil, nil                             // ... and the list does not show the pod yet
		},
	})
	require.NoError(t, err)
	assert.False(t, res.Satisfied)
	assert.False(t, res.Managed)
	assert.Empty(t, pods.creates(), "no second create for the same replica")
}

func TestSync(t *testing.T) {
	t0 := podtest.Epoch
	rs := recRS(3)
	ctl := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	lbl := podtest.Labels(map[string]string{"app": "web"})
	running := func(name string, o ...podtest.Option) *corev1.Pod {
		return podtest.New(name, append([]podtest.Option{ctl, lbl}, o...)...)
	}
	now := t0.Add(time.Hour)
	cases := []struct {
		name         string
		replicas     int32
		deleting     bool
		minReady     int32
		pods         []*corev1.Pod
		expectAdds   int // pending creations before the sync
		createErr    error
		wantManaged  bool
		wantCreates  int
		wantActive   []string
		wantTerm     []string
		wantCounts   status.Counts
		wantRequeue  bool
		wantAfter    time.Duration
		wantErrIs    error
		wantSatisfed bool
	}{
		{name: "R-10.5 active and terminating split; terminal pods are neither", replicas: 2,
			pods: []*corev1.Pod{
				running("a", podtest.Ready(t0)),
				running("b", podtest.Phase(corev1.PodSucceeded)),
				running("c", podtest.Deleting(t0)),
				running("d", podtest.Deleting(t0), podtest.Phase(corev1.PodFailed)),
				running("e", podtest.Phase(corev1.PodPending)),
				nil,
			},
			wantSatisfed: true, wantManaged: true,
			wantActive: []string{"default/a", "default/e"}, wantTerm: []string{"default/c"},
			wantCounts: status.Counts{Replicas: 2, FullyLabeled: 2, Ready: 1, Available: 1, Terminating: 1}},
		{name: "R-10.6 satisfied and not deleting: ManageReplicas creates", replicas: 3,
			pods:         []*corev1.Pod{running("a")},
			wantSatisfed: true, wantManaged: true, wantCreates: 2,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1}},
		{name: "R-10.6 owner being deleted: no ManageReplicas, counts still computed", replicas: 3, deleting: true,
			pods:         []*corev1.Pod{running("a")},
			wantSatisfed: true, wantManaged: false,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1}},
		{name: "R-10.6 expectations pending: no ManageReplicas", replicas: 3, expectAdds: 1,
			pods:         []*corev1.Pod{running("a")},
			wantSatisfed: false, wantManaged: false,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1}},
		{name: "R-10.8 ready but not yet available: requeue when it becomes available", replicas: 1, minReady: 10,
			pods:         []*corev1.Pod{running("a", podtest.Ready(now.Add(-3*time.Second)))},
			wantSatisfed: true, wantManaged: true,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1},
			wantRequeue: true, wantAfter: 7 * time.Second},
		{name: "R-10.8 every ready pod available: no requeue", replicas: 1, minReady: 10,
			pods:         []*corev1.Pod{running("a", podtest.Ready(now.Add(-time.Minute)))},
			wantSatisfed: true, wantManaged: true,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1, Available: 1}},
		{name: "R-10.8 the manage step failed: no requeue, the error is in ManageErr", replicas: 2, minReady: 10,
			pods:         []*corev1.Pod{running("a", podtest.Ready(now.Add(-3*time.Second)))},
			createErr:    errRecQuota,
			wantSatisfed: true, wantManaged: true, wantCreates: 1, wantErrIs: errRecQuota,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1}},
		{name: "R-8.2 pods missing template labels are not fully labeled", replicas: 1,
			pods:         []*corev1.Pod{podtest.New("a", ctl)},
			wantSatisfed: true, wantManaged: true,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.replicas)
			pods := &recPods{CreateErr: func(context.Context, *corev1.Pod, int) error { return tc.createErr }}
			m := &reconcile.Manager{Pods: pods, Clock: fakeclock.New(now)}
			if tc.expectAdds > 0 {
				m.Tracker().ExpectCreations("default/web", tc.expectAdds)
			}
			res, err := m.Sync(context.Background(), reconcile.SyncRequest{
				Owner: reconcile.ReplicaSetOwner(rs), Deleting: tc.deleting, MinReadySeconds: tc.minReady,
				Pods: recList(tc.pods...),
			})
			// The manage error is reported in res.ManageErr only; Sync's
			// error is for a sync that did not run to the end.
			require.NoError(t, err)
			if tc.wantErrIs != nil {
				require.ErrorIs(t, res.ManageErr, tc.wantErrIs)
			} else {
				require.NoError(t, res.ManageErr)
			}
			assert.Equal(t, tc.wantSatisfed, res.Satisfied, "Satisfied")
			assert.Equal(t, tc.wantManaged, res.Managed, "Managed")
			assert.Len(t, pods.creates(), tc.wantCreates, "creates")
			assert.Equal(t, tc.wantActive, recNilIfEmpty(recKeys(res.Active)), "Active")
			assert.Equal(t, tc.wantTerm, recNilIfEmpty(recKeys(res.Terminating)), "Terminating")
			assert.Equal(t, len(res.Active)-int(tc.replicas), res.Diff, "Diff")
			assert.Equal(t, tc.wantCounts, res.Counts, "Counts")
			assert.Equal(t, now, res.Now, "Now (R-10.7)")
			assert.Equal(t, tc.wantRequeue, res.Requeue, "Requeue")
			assert.Equal(t, tc.wantAfter, res.RequeueAfter, "RequeueAfter")
		})
	}
}

// the counts use one clock reading, taken after the manage
// step; the requeue delay is measured from a fresh one.
func TestSyncClockReadings(t *testing.T) {
	t0 := podtest.Epoch
	rs := recRS(1)
	clock := &recTickClock{now: t0}
	m := &reconcile.Manager{Pods: &recPods{}, Clock: clock}
	p := podtest.New("a", podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.Ready(t0.Add(-3*time.Second)))
	res, err := m.Sync(context.Background(), reconcile.SyncRequest{
		Owner: reconcile.ReplicaSetOwner(rs), MinReadySeconds: 10, Pods: recList(p),
	})
	require.NoError(t, err)
	assert.Equal(t, t0, res.Now)
	require.True(t, res.Requeue)
	assert.Equal(t, 6*time.Second, res.RequeueAfter, "available at t0+7s, measured from the second reading t0+1s")
}

// Related is called only when pods must be deleted; its error is reported and
// the deletion proceeds with zero ranks.
func TestSyncRelated(t *testing.T) {
	rs := recRS(1)
	owned := recOwned(rs, 2)
	errList := errors.New("lister broke")
	for _, tc := range []struct {
		name        string
		replicas    int32
		relatedErr  error
		wantCalled  bool
		wantDeletes int
	}{
		{"not called when nothing is deleted", 2, nil, false, 0},
		{"not called when creating", 3, nil, false, 0},
		{"called when deleting", 1, nil, true, 1},
		{"error reported, deletion proceeds", 1, errList, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.replicas)
			called := false
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods}
			res, err := m.Sync(context.Background(), reconcile.SyncRequest{
				Owner: reconcile.ReplicaSetOwner(rs),
				Pods:  recList(owned...),
				Related: func(context.Context) ([]*corev1.Pod, error) {
					called = true
					return nil, tc.relatedErr
				},
			})
			require.NoError(t, err)
			assert.Equal(t, tc.wantCalled, called)
			assert.Equal(t, tc.relatedErr, res.RelatedErr)
			assert.Len(t, pods.deletes(), tc.wantDeletes)
		})
	}
}

func TestSyncErrors(t *testing.T) {
	rs := recRS(1)
	errList := errors.New("cache not synced")
	m := &reconcile.Manager{Pods: &recPods{}}

	_, err := m.Sync(context.Background(), reconcile.SyncRequest{Owner: reconcile.ReplicaSetOwner(rs)})
	require.ErrorContains(t, err, "reconcile: owner default/web: SyncRequest.Pods is nil")

	bad := reconcile.ReplicaSetOwner(rs)
	bad.Replicas = -1
	_, err = m.Sync(context.Background(), reconcile.SyncRequest{Owner: bad, Pods: recList()})
	require.ErrorContains(t, err, "negative")

	res, err := m.Sync(context.Background(), reconcile.SyncRequest{
		Owner: reconcile.ReplicaSetOwner(rs),
		Pods:  func(context.Context) ([]*corev1.Pod, error) { return nil, errList },
	})
	require.ErrorIs(t, err, errList)
	assert.False(t, res.Managed)
	assert.NoError(t, res.ManageErr)
}

// A failed manage step is not an error of Sync: the sync runs to the end and
// the failure is reported in ManageErr only, for the status.
func TestSyncManageErrorIsNotSyncError(t *testing.T) {
	t0 := podtest.Epoch
	rs := recRS(2)
	noTemplate := reconcile.ReplicaSetOwner(rs)
	noTemplate.Template = nil
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods, Clock: fakeclock.New(t0)}
	res, err := m.Sync(context.Background(), reconcile.SyncRequest{Owner: noTemplate, Pods: recList()})
	require.NoError(t, err)
	assert.True(t, res.Managed)
	require.ErrorContains(t, res.ManageErr, "reconcile: owner default/web has no pod template")
	assert.Empty(t, pods.creates())
	assert.Equal(t, -2, res.Diff)
	assert.Equal(t, t0, res.Now)
	assert.False(t, res.Requeue)

	st := status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, status.Options{})
	require.Len(t, st.Conditions, 1, "R-8.4: the manage error sets ReplicaFailure")
	assert.Equal(t, "FailedCreate", st.Conditions[0].Reason)
}

// The private Tracker runs on the Manager's clock: an unobserved creation
// expires after the TTL, measured on that clock.
func TestSyncPrivateTrackerUsesClock(t *testing.T) {
	clock := fakeclock.New(podtest.Epoch)
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods, Clock: clock}
	req := reconcile.SyncRequest{Owner: reconcile.ReplicaSetOwner(recRS(1)), Pods: recList()}
	_, err := m.Sync(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, pods.creates(), 1)

	clock.Step(5 * time.Minute)
	res, err := m.Sync(context.Background(), req)
	require.NoError(t, err)
	assert.False(t, res.Satisfied, "exactly 5m old is not expired")
	assert.Equal(t, expectations.Waiting, res.Expectations.Resolution)

	clock.Step(time.Nanosecond)
	res, err = m.Sync(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, res.Satisfied)
	assert.Equal(t, expectations.Expired, res.Expectations.Resolution)
	assert.Len(t, pods.creates(), 2, "the expired round lets the sync create again, as upstream")
}
