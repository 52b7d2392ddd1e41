package reconcile_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// With TrackCreations the Manager names the pods itself (issue 7).
func TestTrackCreationsNames(t *testing.T) {
	pods := &recPods{}
	gated := expectations.New(expectations.Options{Gate: new(expectations.Gate)})
	m := &reconcile.Manager{Pods: pods, Expectations: gated, TrackCreations: true, NameGenerator: recSeqNames()}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(3)), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"web-0", "web-1", "web-2"}, out.Names)
	sent := pods.creates()
	require.Len(t, sent, 3)
	var names []string
	for _, p := range sent {
		assert.Empty(t, p.GenerateName, "a Name, not a GenerateName")
		names = append(names, p.Name)
	}
	assert.ElementsMatch(t, out.Names, names)
	recPending(t, m, "default/web", 3, 0)
	snap, ok := m.Tracker().Snapshot("default/web")
	require.True(t, ok)
	assert.True(t, snap.TracksCreations)
	assert.Equal(t, []string{"default/web-0", "default/web-1", "default/web-2"}, snap.CreationKeys)
	// Write evidence: the highest resourceVersion of the create responses.
	assert.Equal(t, "102", snap.WriteRV)
}

// Without TrackCreations creations are counted, as upstream; created pods'
// resourceVersions are still recorded as evidence in the Gate of a Tracker
// built on one. The private Tracker has no Gate: nothing is recorded that
// its caller would have to clear.
func TestCountedCreationsRecordWrites(t *testing.T) {
	gated := expectations.New(expectations.Options{Gate: new(expectations.Gate)})
	for _, tc := range []struct {
		name    string
		tracker *expectations.Tracker
		wantRV  string
	}{
		{"a Tracker on a Gate", gated, "101"},
		{"the private Tracker", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &reconcile.Manager{Pods: &recPods{}, Expectations: tc.tracker}
			_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(2)), nil, nil)
			require.NoError(t, err)
			snap, ok := m.Tracker().Snapshot("default/web")
			require.True(t, ok)
			assert.False(t, snap.TracksCreations)
			assert.Nil(t, snap.CreationKeys)
			assert.Equal(t, tc.wantRV, snap.WriteRV)
		})
	}
}

// The default generator follows the API server's generateName scheme.
func TestTrackCreationsDefaultGenerator(t *testing.T) {
	for _, tc := range []struct {
		name, owner, wantPrefix string
	}{
		{"short owner name", "web", "web-"},
		{"prefix cut to 58 characters", strings.Repeat("a", 70), strings.Repeat("a", 58)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(50)
			rs.Name = tc.owner
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods, TrackCreations: true}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
			require.NoError(t, err)
			require.Len(t, out.Names, 50)
			re := regexp.MustCompile("^" + regexp.QuoteMeta(tc.wantPrefix) + "[bcdfghjklmnpqrstvwxz2456789]{5}$")
			seen := map[string]bool{}
			for _, n := range out.Names {
				assert.Regexp(t, re, n)
				assert.LessOrEqual(t, len(n), 63)
				assert.False(t, seen[n], "distinct names")
				seen[n] = true
			}
		})
	}
}

// A generator that cannot produce distinct names is an error before any
// call or expectation.
func TestTrackCreationsBadGenerator(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  func(string) string
		want string
	}{
		{"constant", func(p string) string { return p + "x" }, "duplicate names"},
		{"empty", func(string) string { return "" }, "empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods, TrackCreations: true, NameGenerator: tc.gen}
			_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(2)), nil, nil)
			require.ErrorContains(t, err, tc.want)
			assert.Empty(t, pods.creates())
			_, _, ok := m.Tracker().Pending("default/web")
			assert.False(t, ok)
		})
	}
}

// A failed create, AlreadyExists included, lowers its own key; the
// never-attempted ones are lowered too.
func TestTrackCreationsFailedCreateLowersKey(t *testing.T) {
	pods := &recPods{CreateErr: func(_ context.Context, p *corev1.Pod, _ int) error {
		if p.Name == "web-1" {
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, p.Name)
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods, TrackCreations: true, NameGenerator: recSeqNames()}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(5)), nil, nil)
	require.True(t, apierrors.IsAlreadyExists(err))
	assert.Equal(t, 1, out.CreateFailed)
	assert.Equal(t, 2, out.Skipped)
	recPending(t, m, "default/web", 2, 0)
	snap, ok := m.Tracker().Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, []string{"default/web-0", "default/web-2"}, snap.CreationKeys, "the failed and skipped keys were lowered")
}

// recStoredPods returns CreateErr and DeleteErr for a recPods that
// remembers created names, answers AlreadyExists for a taken name, and
// "loses" the response (stores the pod, returns a timeout) for the names in
// lose.
func recStoredPods(lose ...string) *recPods {
	var mu sync.Mutex
	stored := map[string]bool{}
	return &recPods{CreateErr: func(_ context.Context, p *corev1.Pod, _ int) error {
		mu.Lock()
		defer mu.Unlock()
		if stored[p.Name] {
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, p.Name)
		}
		stored[p.Name] = true
		if slices.Contains(lose, p.Name) {
			return apierrors.NewTimeoutError("request timed out", 1)
		}
		return nil
	}}
}

func recNamed(rs *appsv1.ReplicaSet, names ...string) []*corev1.Pod {
	out := make([]*corev1.Pod, len(names))
	for i, n := range names {
		out[i] = podtest.New(n, podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"))
	}
	return out
}

// Issue 7 (d): a create whose response was lost is retried under the same
// name in the owner's next create round, meets AlreadyExists and creates no
// extra pod; its key stays expected until the add event arrives.
func TestTrackCreationsRetriesLostCreates(t *testing.T) {
	rs := recRS(3)
	pods := recStoredPods("web-1")
	m := &reconcile.Manager{Pods: pods, TrackCreations: true, NameGenerator: recSeqNames()}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.Error(t, err, "round 1: the lost response looks like a failure")
	assert.Equal(t, 1, out.CreateFailed)
	assert.Len(t, out.Created, 2)

	// Round 2: the cache shows web-0 and web-2, not yet web-1: one pod
	// looks missing.
	out, err = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recNamed(rs, "web-0", "web-2"), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"web-1"}, out.Names, "the uncertain name is retried")
	assert.Equal(t, 1, out.Retried)
	assert.Equal(t, 1, out.AlreadyExisted)
	assert.Empty(t, out.Created, "no extra pod")
	snap, ok := m.Tracker().Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, []string{"default/web-1"}, snap.CreationKeys, "web-1 still expected: its add event will come")
	assert.False(t, snap.Satisfied)

	// Round 3: all seen; nothing left to retry.
	rs.Spec.Replicas = recPtr32(4)
	out, err = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recNamed(rs, "web-0", "web-1", "web-2"), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"web-3"}, out.Names)
	assert.Zero(t, out.Retried)
}

func TestTrackCreationsRetrySelection(t *testing.T) {
	for _, tc := range []struct {
		name        string
		active      []string // round 2
		forget      bool
		wantNames   []string
		wantRetried int
	}{
		{name: "an uncertain pod seen in the cache is not retried", active: []string{"web-0", "web-1"}, wantNames: []string{"web-3"}},
		{name: "Forget drops the uncertain names", active: []string{"web-0"}, forget: true, wantNames: []string{"web-3", "web-4"}},
		{name: "only as many retries as pods are missing", active: []string{"web-0", "web-x", "web-y"}, wantNames: []string{"web-1"}, wantRetried: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(3)
			m := &reconcile.Manager{Pods: recStoredPods("web-1"), TrackCreations: true, NameGenerator: recSeqNames()}
			_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
			require.Error(t, err)
			if tc.forget {
				m.Forget("default/web")
			}
			rs.Spec.Replicas = recPtr32(int32(len(tc.active) + len(tc.wantNames)))
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recNamed(rs, tc.active...), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.wantNames, out.Names)
			assert.Equal(t, tc.wantRetried, out.Retried)
		})
	}
}

// AlreadyExists on a fresh name is a clash with someone else's pod: an
// error, lowered, and the name is not retried.
func TestTrackCreationsFreshNameClash(t *testing.T) {
	rs := recRS(1)
	gen := func() func(string) string {
		names := []string{"web-taken", "web-free"}
		return func(string) string { n := names[0]; names = names[1:]; return n }
	}()
	pods := recStoredPods()
	_, _ = pods.CreatePod(context.Background(), podtest.New("web-taken")) // someone else's
	m := &reconcile.Manager{Pods: pods, TrackCreations: true, NameGenerator: gen}
	_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.True(t, apierrors.IsAlreadyExists(err))
	recPending(t, m, "default/web", 0, 0)
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"web-free"}, out.Names)
}

func recPtr32(v int32) *int32 { return &v }

// A retried name that this round did not get to (its batch never ran) stays
// uncertain for the round after.
func TestTrackCreationsKeepsUnattemptedRetries(t *testing.T) {
	rs := recRS(3)
	lost := map[string]bool{"web-1": true, "web-2": true}
	var mu sync.Mutex
	fail := false
	pods := &recPods{CreateErr: func(_ context.Context, p *corev1.Pod, _ int) error {
		mu.Lock()
		defer mu.Unlock()
		if fail || lost[p.Name] {
			return errRecQuota
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods, TrackCreations: true, NameGenerator: recSeqNames()}
	_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.Error(t, err) // web-1 and web-2 failed: both uncertain

	fail = true // round 2: the first retry fails, the second is skipped
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recNamed(rs, "web-0"), nil)
	require.Error(t, err)
	assert.Equal(t, []string{"web-1", "web-2"}, out.Names)
	assert.Equal(t, 1, out.Skipped)

	fail, lost = false, nil // round 3: the API works again
	out, err = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recNamed(rs, "web-0"), nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"web-1", "web-2"}, out.Names)
	assert.Equal(t, 2, out.Retried)
}

// An informer event for a pod whose create response was lost proves that
// the create happened: the Controller never retries its name, even once the
// pod is terminating (a retry would meet AlreadyExists on the remains and
// wait for an add event that never comes again, until the expiry). Found by
// the examples' exact-mode demo.
func TestControllerEventClearsRetriedName(t *testing.T) {
	rs := recRS(3)
	c := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.PodClient = withControl(cfg.Cluster.PodClient, recStoredPods("web-1"))
		cfg.SetTrackCreations(true)
		cfg.SetNameGenerator(recSeqNames())
	})
	ctx := context.Background()
	res, err := c.Sync(ctx, "default/web")
	require.Error(t, err, "round 1: web-1's lost response looks like a failure")
	require.Equal(t, []string{"web-0", "web-1", "web-2"}, res.Outcome.Names)

	pods := recOwned(rs, 3)
	for _, p := range pods {
		c.PodAdded(p)
	}
	// web-1 is deleted behind the controller's back and lingers terminating.
	gone := pods[1].DeepCopy()
	gone.ResourceVersion = "2"
	gone.DeletionTimestamp = &metav1.Time{Time: podtest.Epoch}
	c.PodUpdated(pods[1], gone)
	c.pods.mu.Lock()
	c.pods.pods = []*corev1.Pod{pods[0], gone, pods[2]}
	c.pods.mu.Unlock()

	res, err = c.Sync(ctx, "default/web")
	require.NoError(t, err)
	assert.Equal(t, []string{"web-3"}, res.Outcome.Names, "a fresh name, not the observed web-1")
	assert.Zero(t, res.Outcome.Retried)
	assert.Zero(t, res.Outcome.AlreadyExisted)
}

// A bare Manager needs no Forget (issue 33): the names of an owner's failed
// creates are dropped five minutes after the last failure, by the next
// call that looks (for any owner), so a deleted owner's names go by
// themselves; until then they are retried.
func TestUncertainNamesExpire(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   time.Duration
		retried bool
	}{
		{"retried within five minutes", 5*time.Minute - time.Second, true},
		{"dropped after five minutes", 5 * time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(3)
			clk := fakeclock.New(podtest.Epoch)
			m := &reconcile.Manager{Pods: recStoredPods("web-1"), Clock: clk, TrackCreations: true, NameGenerator: recSeqNames()}
			_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
			require.Error(t, err, "web-1's response is lost: its name is kept")
			clk.Step(tc.after)
			// Another owner's call sweeps.
			other := recRS(1)
			other.Name, other.UID = "other", "uid-other"
			_, err = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(other), nil, nil)
			require.NoError(t, err)
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recNamed(rs, "web-0", "web-2"), nil)
			require.NoError(t, err)
			if tc.retried {
				assert.Equal(t, []string{"web-1"}, out.Names)
				assert.Equal(t, 1, out.Retried)
			} else {
				assert.NotContains(t, out.Names, "web-1")
				assert.Zero(t, out.Retried)
			}
		})
	}
}

// A retried name can belong to two pods: the first create's, whose
// response was lost and which was deleted since, and the retry's. The
// first pod's late add event must not settle the retried key, or the next
// sync, not seeing the retry's pod yet, creates one more (found by
// TestSimLateAndDuplicateEvents); the retry's own add does.
func TestRetriedNameIgnoresTheEarlierPodsAdd(t *testing.T) {
	rs := recRS(1)
	c := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.SetTrackCreations(true)
		cfg.SetNameGenerator(recSeqNames())
	})
	c.control.CreateErr = func(_ context.Context, _ *corev1.Pod, call int) error {
		if call == 0 {
			return apierrors.NewTimeoutError("response lost", 1) // web-0 was made, as uid-first
		}
		return nil
	}
	_, err := c.Sync(t.Context(), "default/web")
	require.Error(t, err)
	// web-0 (uid-first) is deleted behind the controller's back before its
	// events arrive; the retry makes web-0 again (uid-web-0).
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	require.Equal(t, 1, res.Outcome.Retried)
	require.Len(t, res.Outcome.Created, 1)

	first := podtest.New("web-0", podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.UID("uid-first"))
	c.PodAdded(first)
	assert.False(t, c.Tracker().Satisfied("default/web"), "the earlier pod's add settles nothing")
	c.PodAdded(res.Outcome.Created[0])
	assert.True(t, c.Tracker().Satisfied("default/web"), "the retry's own add does")
}

// When the retry's response is lost too, its pod's UID is unknown: the
// earlier pod's late add event then settles the key, but the name, sent
// twice, stays to be retried, so that the next sync, not seeing the
// retry's pod yet, meets AlreadyExists on it rather than making a new pod.
func TestNameSentTwiceStaysUncertain(t *testing.T) {
	rs := recRS(1)
	c := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.SetTrackCreations(true)
		cfg.SetNameGenerator(recSeqNames())
	})
	c.control.CreateErr = func(_ context.Context, _ *corev1.Pod, call int) error {
		if call < 2 {
			return apierrors.NewTimeoutError("response lost", 1) // web-0 made twice, each response lost
		}
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, "web-0")
	}
	_, err := c.Sync(t.Context(), "default/web")
	require.Error(t, err)
	res, err := c.Sync(t.Context(), "default/web")
	require.Error(t, err)
	require.Equal(t, []string{"web-0"}, res.Outcome.Names)

	c.PodAdded(podtest.New("web-0", podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.UID("uid-first")))
	res, err = c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Equal(t, []string{"web-0"}, res.Outcome.Names, "retried, not a fresh name")
	assert.Equal(t, 1, res.Outcome.AlreadyExisted)
}
