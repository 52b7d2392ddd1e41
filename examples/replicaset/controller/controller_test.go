package controller_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	cluster "github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

var modes = []struct {
	name  string
	exact bool
}{
	{"upstream", false},
	{"exact", true},
}

// Scale up from zero and back down, in both expectation modes: creates in
// slow-start batches, deletes ranked, status counts and
// observedGeneration written, events recorded.
func TestScaleUpAndDown(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, envOptions{exact: m.exact, seed: 1})
			rs := e.createRS("web", 0)
			e.awaitConverged(rs, 0)

			e.scale("web", 60)
			cur := e.awaitConverged(rs, 60)
			assert.Equal(t, cur.Generation, cur.Status.ObservedGeneration)
			assert.Equal(t, 60, e.eventCount(clientgo.SuccessfulCreate))
			assert.LessOrEqual(t, e.maxActiveSeen(), 60, "never more pods than desired")

			e.scale("web", 7)
			e.awaitConverged(rs, 7)
			assert.Equal(t, 53, e.eventCount(clientgo.SuccessfulDelete))
			assert.Zero(t, e.eventCount(clientgo.FailedCreate)+e.eventCount(clientgo.FailedDelete))
			assert.True(t, e.ctrl.Tracker().Satisfied(ns+"/web"))
		})
	}
}

// Injected API faults: failed creates stop the slow start and are lowered
// lost create responses, failed deletes are lowered by key
// failed status writes are retried. The controller still
// converges, and the failures show up as events.
func TestConvergesUnderFaults(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, envOptions{exact: m.exact, seed: 7, faults: cluster.Faults{
				CreatePod: 0.08, CreatePodLost: 0.04, DeletePod: 0.1, UpdateStatus: 0.1,
			}})
			rs := e.createRS("web", 80)
			e.awaitConverged(rs, 80)
			e.scale("web", 3)
			e.awaitConverged(rs, 3)

			require.Positive(t, e.cl.Stats().FaultsInjected)
			if m.exact {
				// A lost create response is retried under the same name
				// (AlreadyExists), never as a second pod.
				assert.LessOrEqual(t, e.maxActiveSeen(), 80, "never more pods than desired")
			}
			assert.Positive(t, e.eventCount(clientgo.FailedCreate), "create faults became FailedCreate events")
			assert.Positive(t, e.eventCount(clientgo.FailedDelete), "delete faults became FailedDelete events")
		})
	}
}

// Pods deleted behind the controller's back, gracefully and at once, are
// replaced (R-11.2 step 3, R-11.3).
func TestReplacesPodsDeletedBehindItsBack(t *testing.T) {
	e := newEnv(t, envOptions{exact: true, seed: 3})
	rs := e.createRS("web", 20)
	e.awaitConverged(rs, 20)

	active, _ := e.owned(rs)
	gone := map[string]bool{}
	var zero int64
	for i, p := range active[:5] {
		opts := metav1.DeleteOptions{}
		if i%2 == 0 {
			opts.GracePeriodSeconds = &zero // removed at once: only a delete event
		}
		require.NoError(t, e.cl.Clientset.CoreV1().Pods(ns).Delete(t.Context(), p.Name, opts))
		gone[p.Name] = true
	}
	e.awaitConverged(rs, 20)
	after, _ := e.owned(rs)
	for _, p := range after {
		assert.False(t, gone[p.Name], "pod %s was deleted and must have been replaced", p.Name)
	}
	assert.Equal(t, 25, e.eventCount(clientgo.SuccessfulCreate))
}

// Claiming: a matching orphan is adopted (and, being surplus, the
// least valuable pod is deleted); an owned pod whose labels stop matching is
// released and replaced; a pod owned by someone else is left alone.
func TestAdoptsAndReleases(t *testing.T) {
	e := newEnv(t, envOptions{seed: 4})
	rs := e.createRS("web", 5)
	e.awaitConverged(rs, 5)

	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns, Labels: appLabels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
	}
	_, err := e.cl.Clientset.CoreV1().Pods(ns).Create(t.Context(), orphan, metav1.CreateOptions{})
	require.NoError(t, err)
	foreign := orphan.DeepCopy()
	foreign.Name = "foreign"
	foreign.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: "other-uid", Controller: ptr(true)}}
	_, err = e.cl.Clientset.CoreV1().Pods(ns).Create(t.Context(), foreign, metav1.CreateOptions{})
	require.NoError(t, err)

	e.awaitConverged(rs, 5)
	require.True(t, pollUntil(t, 30*time.Second, func() bool { return e.adopted() > 0 }), "the orphan was adopted")
	f, err := e.cl.Clientset.CoreV1().Pods(ns).Get(t.Context(), "foreign", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, types.UID("other-uid"), metav1.GetControllerOf(f).UID, "someone else's pod is not touched")

	active, _ := e.owned(rs)
	victim := active[0]
	patch := []byte(`{"metadata":{"labels":{"app":"moved"}}}`)
	_, err = e.cl.Clientset.CoreV1().Pods(ns).Patch(t.Context(), victim.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	assert.True(t, pollUntil(t, 30*time.Second, func() bool {
		p, err := e.cl.Clientset.CoreV1().Pods(ns).Get(t.Context(), victim.Name, metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(p) == nil
	}), "a pod that stopped matching is released")
	e.awaitConverged(rs, 5) // and replaced
	// A sync that still sees the stale, owned copy in its cache sends the
	// release patch again (a no-op on the server, as upstream's would be),
	// so the patches are counted at least once rather than exactly once.
	assert.GreaterOrEqual(t, e.released(), 1)
}

func (e *env) adopted() int  { return e.total(func(r controller.Report) int { return r.Adopted }) }
func (e *env) released() int { return e.total(func(r controller.Report) int { return r.Released }) }

// total sums one count over every sync report so far.
func (e *env) total(count func(controller.Report) int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, r := range e.reports {
		n += count(r)
	}
	return n
}

func ptr[T any](v T) *T { return &v }

// The status write makes at most 2 UpdateStatus calls and 1 GET, keeps the
// acted-on generation on the retry (R-8.7, at most two updates: ), and skips the write when
// nothing changed. Driven through a plain fake clientset whose
// UpdateStatus always fails.
func TestStatusWriteRetriesOnce(t *testing.T) {
	replicas := int32(0)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "u1", Generation: 3},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: appLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: appLabels}},
		},
	}
	client := fake.NewSimpleClientset(rs)
	client.PrependReactor("update", "replicasets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, apierrors.NewInternalError(errors.New("boom"))
		}
		return false, nil, nil
	})
	err := controller.SyncOnce(t.Context(), client, rs)
	require.Error(t, err)

	var updates, gets int
	for _, a := range client.Actions() {
		switch {
		case a.GetVerb() == "update" && a.GetSubresource() == "status":
			updates++
			sent := a.(k8stesting.UpdateAction).GetObject().(*appsv1.ReplicaSet)
			assert.Equal(t, int64(3), sent.Status.ObservedGeneration, "observedGeneration is the generation acted on")
		case a.GetVerb() == "get" && a.GetResource().Resource == "replicasets":
			gets++
		}
	}
	assert.Equal(t, 2, updates, "R-8.7: two UpdateStatus calls")
	assert.Equal(t, 1, gets, "R-8.7: one GET between them")

	// Already up to date: no call at all.
	rs.Status = appsv1.ReplicaSetStatus{ObservedGeneration: 3, TerminatingReplicas: ptr(int32(0))}
	client = fake.NewSimpleClientset(rs)
	require.NoError(t, controller.SyncOnce(t.Context(), client, rs))
	for _, a := range client.Actions() {
		assert.NotEqual(t, "update", a.GetVerb(), "no write when the status is current")
	}
}

// Beyond upstream: with exact expectations, a round whose creations were
// never observed (here: one extra pending creation, as after a missed watch
// event) is resolved by evidence — the pod informer's store has passed the
// controller's own writes — instead of blocking the ReplicaSet for the
// 5-minute timeout. This checks the pods cache wiring end to end.
func TestExactResolvesMissedEventsByEvidence(t *testing.T) {
	e := newEnv(t, envOptions{exact: true, seed: 9})
	rs := e.createRS("web", 10)
	e.awaitConverged(rs, 10)

	key := ns + "/web"
	e.ctrl.Tracker().Raise(key, 1, 0) // an add event that will never come
	adds, _, ok := e.ctrl.Tracker().Pending(key)
	require.True(t, ok)
	require.Equal(t, 1, adds)

	e.scale("web", 12)
	e.awaitConverged(rs, 12) // well before the 5-minute timeout
	assert.True(t, e.sawResolution(expectations.ResolvedByEvidence))
}

func (e *env) sawResolution(r expectations.Resolution) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, rep := range e.reports {
		if rep.Sync.Expectations.Resolution == r {
			return true
		}
	}
	return false
}

// while the fence refuses, the controller writes nothing (no pod,
// no status) and its syncs fail with reconcile.ErrFenced; once it allows
// again, the controller converges.
func TestFencedWritesNothing(t *testing.T) {
	var open atomic.Bool
	errLost := errors.New("lease lost")
	e := newEnv(t, envOptions{exact: true, seed: 3, fence: func() error {
		if open.Load() {
			return nil
		}
		return errLost
	}})
	rs := e.createRS("web", 10)
	ok := pollUntil(t, 30*time.Second, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, r := range e.reports {
			if errors.Is(r.Err, reconcile.ErrFenced) && errors.Is(r.Err, errLost) {
				return true
			}
		}
		return false
	})
	require.True(t, ok, "no fenced sync reported")
	active, _ := e.owned(rs)
	assert.Empty(t, active, "no pod created while fenced")
	cur, err := e.cl.Clientset.AppsV1().ReplicaSets(ns).Get(t.Context(), "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Zero(t, cur.Status.ObservedGeneration, "no status written while fenced")

	open.Store(true)
	e.awaitConverged(rs, 10)
}

// SyncSlots bounds the syncs running at once, whatever the workers: with
// one slot, the controller's three workers sync one ReplicaSet at a time
// (a sharded replica gives all its shards' controllers one such budget).
func TestSyncSlotsBoundTheSyncsAtOnce(t *testing.T) {
	var running, most atomic.Int32
	e := newEnv(t, envOptions{seed: 7, slots: make(chan struct{}, 1), onSync: func(controller.Report) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond) // long enough for another worker to overlap, were it let in
	}})
	var sets []*appsv1.ReplicaSet
	for i := range 6 {
		sets = append(sets, e.createRS(fmt.Sprintf("web-%d", i), 3))
	}
	for _, rs := range sets {
		e.awaitConverged(rs, 3)
	}
	assert.Equal(t, int32(1), most.Load(), "one sync at a time with one slot")
}
