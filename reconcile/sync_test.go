package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

func withClock(c reconcile.Clock) func(*reconcile.Config[*appsv1.ReplicaSet]) {
	return func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.Clock = c }
}

// the expectations are checked before the pods are read, so a
// creation observed in between does not let this sync act on a list that
// misses the pod.
func TestSyncChecksExpectationsBeforeListing(t *testing.T) {
	rs := recRS(1)
	var c *recController
	c = newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.Pods = podsFunc(func(string) ([]*corev1.Pod, error) {
			c.Tracker().CreationObserved("default/web") // the add event races the sync
			return nil, nil                             // ... and the list does not show the pod yet
		})
	})
	c.Tracker().ExpectCreations("default/web", 1)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.False(t, res.Expectations.Satisfied)
	assert.False(t, res.Managed)
	assert.Empty(t, c.control.creates(), "no second create for the same replica")
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
			wantAfter: 7 * time.Second},
		{name: "R-10.8 every ready pod available: no requeue", replicas: 1, minReady: 10,
			pods:         []*corev1.Pod{running("a", podtest.Ready(now.Add(-time.Minute)))},
			wantSatisfed: true, wantManaged: true,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1, Available: 1}},
		{name: "R-10.7, R-10.8 the manage step failed: its error is returned, no requeue", replicas: 2, minReady: 10,
			pods:         []*corev1.Pod{running("a", podtest.Ready(now.Add(-3*time.Second)))},
			createErr:    errRecQuota,
			wantSatisfed: true, wantManaged: true, wantCreates: 1, wantErrIs: errRecQuota,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1}},
		{name: "R-8.2 pods missing template labels are not fully labeled", replicas: 1,
			pods:         []*corev1.Pod{podtest.New("a", ctl, podtest.Labels(map[string]string{"app": "web"}))},
			wantSatisfed: true, wantManaged: true,
			wantActive: []string{"default/a"}, wantCounts: status.Counts{Replicas: 1, FullyLabeled: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.replicas)
			rs.Spec.MinReadySeconds = tc.minReady
			if tc.deleting {
				rs.DeletionTimestamp = &metav1.Time{Time: t0}
			}
			c := newRecController(t, newRecOwners(rs), tc.pods, withClock(fakeclock.New(now)))
			c.control.CreateErr = func(context.Context, *corev1.Pod, int) error { return tc.createErr }
			if tc.expectAdds > 0 {
				c.Tracker().ExpectCreations("default/web", tc.expectAdds)
			}
			res, err := c.Sync(t.Context(), "default/web")
			if tc.wantErrIs != nil {
				require.ErrorIs(t, err, tc.wantErrIs, "R-10.7: the manage error is Sync's error")
				require.ErrorIs(t, res.ManageErr, tc.wantErrIs)
				assert.NotErrorIs(t, err, reconcile.ErrTerminal)
			} else {
				require.NoError(t, err)
				require.NoError(t, res.ManageErr)
			}
			assert.Equal(t, tc.deleting, res.Deleting, "Deleting")
			assert.Equal(t, tc.wantSatisfed, res.Expectations.Satisfied, "Satisfied")
			assert.Equal(t, tc.wantManaged, res.Managed, "Managed")
			assert.Len(t, c.control.creates(), tc.wantCreates, "creates")
			assert.Equal(t, tc.wantActive, recNilIfEmpty(recKeys(res.Active)), "Active")
			assert.Equal(t, tc.wantTerm, recNilIfEmpty(recKeys(res.Terminating)), "Terminating")
			assert.Equal(t, len(res.Active)-int(tc.replicas), res.Diff, "Diff")
			assert.Equal(t, tc.wantCounts, res.Counts, "Counts")
			assert.Equal(t, now, res.Now, "Now (R-10.7)")
			assert.Equal(t, tc.wantAfter, res.RequeueAfter, "RequeueAfter")
			writes := c.status.writes()
			require.Len(t, writes, 1, "one status write per sync")
			assert.Equal(t, res.Counts, writes[0].Counts)
			assert.Zero(t, writes[0].RequeueAfter, "decided after the write")
		})
	}
}

// the counts use one clock reading, taken after the manage
// step; the requeue delay is measured from a fresh reading after the status
// write. A wait that has already passed still yields a requeue (1ns, where
// upstream adds with no delay).
func TestSyncClockReadings(t *testing.T) {
	t0 := podtest.Epoch
	for _, tc := range []struct {
		name      string
		write     time.Duration // how long the status write takes
		wantAfter time.Duration
	}{
		{"fresh reading 1s later", time.Second, 6 * time.Second},
		{"fresh reading past the availability", 8 * time.Second, time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(1)
			rs.Spec.MinReadySeconds = 10
			clock := fakeclock.New(t0)
			p := podtest.New("a", podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.Labels(map[string]string{"app": "web"}),
				podtest.Ready(t0.Add(-3*time.Second)))
			c := newRecController(t, newRecOwners(rs), []*corev1.Pod{p}, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Clock = clock
				cfg.Status = func(rs *appsv1.ReplicaSet, res reconcile.SyncResult) (*appsv1.ReplicaSet, bool) {
					assert.Equal(t, t0, res.Now)
					return rs.DeepCopy(), true
				}
				cfg.Cluster.StatusWriter = statusFunc[*appsv1.ReplicaSet](func(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
					clock.Step(tc.write)
					return next, nil
				})
			})
			res, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			assert.Equal(t, t0, res.Now)
			assert.Equal(t, status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1}, res.Counts, "counted at Now: not yet available")
			assert.Equal(t, tc.wantAfter, res.RequeueAfter)
		})
	}
}

// the status write error is returned before the manage error, and
// neither leaves a requeue; a status write error alone is returned too.
func TestSyncErrorOrder(t *testing.T) {
	t0 := podtest.Epoch
	errWrite := errors.New("status write conflict")
	for _, tc := range []struct {
		name      string
		createErr error
		writeErr  error
		want      error
	}{
		{"write error before manage error", errRecQuota, errWrite, errWrite},
		{"write error alone", nil, errWrite, errWrite},
		{"manage error alone", errRecQuota, nil, errRecQuota},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(2)
			rs.Spec.MinReadySeconds = 10
			p := podtest.New("a", podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.Labels(map[string]string{"app": "web"}),
				podtest.Ready(t0.Add(-3*time.Second)))
			c := newRecController(t, newRecOwners(rs), []*corev1.Pod{p}, withClock(fakeclock.New(t0)))
			c.control.CreateErr = func(context.Context, *corev1.Pod, int) error { return tc.createErr }
			c.status.err = tc.writeErr
			res, err := c.Sync(t.Context(), "default/web")
			require.ErrorIs(t, err, tc.want)
			if tc.want == errWrite {
				assert.NotErrorIs(t, err, errRecQuota)
			}
			assert.NotErrorIs(t, err, reconcile.ErrTerminal)
			assert.Zero(t, res.RequeueAfter)
			writes := c.status.writes()
			require.Len(t, writes, 1)
			assert.Equal(t, tc.createErr != nil, writes[0].ManageErr != nil, "Status sees the manage error")
		})
	}
}

// Config.Related is called only when pods must be deleted; its error
// is reported and the deletion proceeds with zero ranks.
func TestSyncRelated(t *testing.T) {
	rs := recRS(1)
	owned := labelled(recOwned(rs, 2))
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
			called := false
			c := newRecController(t, newRecOwners(recRS(tc.replicas)), owned, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Related = func(context.Context, *appsv1.ReplicaSet) ([]*corev1.Pod, error) {
					called = true
					return nil, tc.relatedErr
				}
			})
			res, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			assert.Equal(t, tc.wantCalled, called)
			assert.Equal(t, tc.relatedErr, res.RelatedErr)
			assert.Len(t, c.control.deletes(), tc.wantDeletes)
		})
	}
}

// labelled gives pods the app=web labels recRS selects.
func labelled(pods []*corev1.Pod) []*corev1.Pod {
	for _, p := range pods {
		p.Labels = map[string]string{"app": "web"}
	}
	return pods
}

// what Sync returns for an owner that is gone, an
// owner Describe rejects or a cluster-scoped one (terminal, nothing
// written), and transient lister errors. Invalid specs: TestSyncInvalidSpec.
func TestSyncErrors(t *testing.T) {
	errList := errors.New("cache not synced")
	for _, tc := range []struct {
		name         string
		key          string
		rs           *appsv1.ReplicaSet
		getErr       error
		listErr      error
		describe     func(*appsv1.ReplicaSet) (reconcile.Owner, error)
		wantTerminal bool
		wantIs       error
		wantContains string
	}{
		{name: "R-14.9 cluster-scoped owner is terminal", key: "web", rs: recRS(1), wantTerminal: true, wantIs: reconcile.ErrClusterScoped},
		{name: "R-10.1 malformed key is terminal", key: "a/b/c", rs: recRS(1), wantTerminal: true, wantContains: "malformed owner key"},
		{name: "empty key is terminal", key: "", rs: recRS(1), wantTerminal: true, wantContains: "malformed owner key"},
		{name: "Describe error is terminal", key: "default/web", rs: recRS(1), wantTerminal: true, wantIs: errRecQuota,
			describe: func(*appsv1.ReplicaSet) (reconcile.Owner, error) { return reconcile.Owner{}, errRecQuota }},
		{name: "Describe with another key is terminal", key: "default/web", rs: recRS(1), wantTerminal: true, wantContains: "must be empty or",
			describe: func(rs *appsv1.ReplicaSet) (reconcile.Owner, error) {
				o := reconcile.ReplicaSetOwner(rs)
				o.Key = "web"
				return o, nil
			}},
		{name: "Describe with another kind is terminal", key: "default/web", rs: recRS(1), wantTerminal: true, wantContains: "Config.Kind",
			describe: func(rs *appsv1.ReplicaSet) (reconcile.Owner, error) {
				o := reconcile.ReplicaSetOwner(rs)
				o.Kind.Kind = "StatefulSet"
				return o, nil
			}},
		{name: "R-12.5 owner lister error is retried", key: "default/web", rs: recRS(1), getErr: errList, wantIs: errList},
		{name: "R-12.5 pod lister error is retried", key: "default/web", rs: recRS(1), listErr: errList, wantIs: errList},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owners := newRecOwners(tc.rs)
			owners.getErr = tc.getErr
			c := newRecController(t, owners, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				if tc.describe != nil {
					cfg.Describe = tc.describe
				}
			})
			c.pods.err = tc.listErr
			res, err := c.Sync(t.Context(), tc.key)
			require.Error(t, err)
			assert.Equal(t, tc.wantTerminal, errors.Is(err, reconcile.ErrTerminal), "terminal: %v", err)
			if tc.wantIs != nil {
				assert.ErrorIs(t, err, tc.wantIs)
			}
			if tc.wantContains != "" {
				assert.ErrorContains(t, err, tc.wantContains)
			}
			assert.Regexp(t, "^reconcile: ", err.Error())
			assert.False(t, res.Managed)
			assert.Empty(t, c.control.creates())
			assert.Empty(t, c.status.writes(), "no status write for a sync that did not reach it")
		})
	}
}

// an owner that is gone is forgotten: counts, key sets and names of
// unconfirmed creations (TrackCreations); the sync returns nil, and Len
// drops to 0.
func TestSyncOwnerGoneForgetsEverything(t *testing.T) {
	rs := recRS(3)
	owners := newRecOwners(rs)
	c := newRecController(t, owners, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.SetTrackCreations(true) })
	// Lost responses: the names are kept to be retried (issue 7).
	c.control.CreateErr = func(context.Context, *corev1.Pod, int) error { return errRecQuota }
	_, err := c.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, errRecQuota)
	c.Tracker().ExpectCreations("default/web", 1)
	require.Equal(t, 1, c.Len())

	owners.remove(rs)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Zero(t, res)
	assert.Equal(t, 0, c.Len())
	_, _, ok := c.Tracker().Pending("default/web")
	assert.False(t, ok)

	// The names are gone too: a new owner under the same name starts fresh.
	owners.set(recRS(1))
	c.control.CreateErr = nil
	res, err = c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Zero(t, res.Outcome.Retried, "no name of the deleted owner is retried")
}

// A failed manage step still reaches the status write, with the error, so
// that a ReplicaFailure condition reports it.
func TestSyncManageErrorReachesStatus(t *testing.T) {
	t0 := podtest.Epoch
	rs := recRS(2)
	c := newRecController(t, newRecOwners(rs), nil, withClock(fakeclock.New(t0)))
	c.control.CreateErr = func(context.Context, *corev1.Pod, int) error { return errRecQuota }
	res, err := c.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, errRecQuota)
	assert.Equal(t, "reconcile: owner default/web: "+errRecQuota.Error(), err.Error(), "the owner named once")
	assert.True(t, res.Managed)
	assert.Equal(t, -2, res.Diff)
	assert.Equal(t, t0, res.Now)
	assert.Zero(t, res.RequeueAfter)

	writes := c.status.writes()
	require.Len(t, writes, 1)
	st := status.Calculate(rs, writes[0].Active, writes[0].Terminating, writes[0].ManageErr, writes[0].Now, status.Options{})
	require.Len(t, st.Conditions, 1, "R-8.4: the manage error sets ReplicaFailure")
	assert.Equal(t, "FailedCreate", st.Conditions[0].Reason)
}

// The Controller's Tracker runs on Config.Clock: an unobserved creation
// expires after the TTL, measured on that clock.
func TestSyncTrackerUsesConfigClock(t *testing.T) {
	clock := fakeclock.New(podtest.Epoch)
	c := newRecController(t, newRecOwners(recRS(1)), nil, withClock(clock))
	_, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	require.Len(t, c.control.creates(), 1)

	clock.Step(5 * time.Minute)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.False(t, res.Expectations.Satisfied, "exactly 5m old is not expired")
	assert.Equal(t, expectations.Waiting, res.Expectations.Resolution)

	clock.Step(time.Nanosecond)
	res, err = c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.True(t, res.Expectations.Satisfied)
	assert.Equal(t, expectations.Expired, res.Expectations.Resolution)
	assert.Len(t, c.control.creates(), 2, "the expired round lets the sync create again, as upstream")
}
