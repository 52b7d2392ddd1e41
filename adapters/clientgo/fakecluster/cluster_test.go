package fakecluster_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
)

const ns = "default"

func pod(name, generateName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName, Namespace: ns, Labels: map[string]string{"app": "x"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
	}
}

func rv(t *testing.T, obj metav1.Object) int64 {
	t.Helper()
	v, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	require.NoError(t, err)
	return v
}

func TestCreateAssignsNameUIDAndIncreasingVersions(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	pods := c.Clientset.CoreV1().Pods(ns)
	in := pod("", "web-")
	a, err := pods.Create(t.Context(), in, metav1.CreateOptions{})
	require.NoError(t, err)
	b, err := pods.Create(t.Context(), pod("", "web-"), metav1.CreateOptions{})
	require.NoError(t, err)

	assert.Regexp(t, `^web-[bcdfghjklmnpqrstvwxz2456789]{5}$`, a.Name)
	assert.NotEqual(t, a.Name, b.Name)
	assert.NotEmpty(t, a.UID)
	assert.NotEqual(t, a.UID, b.UID)
	assert.False(t, a.CreationTimestamp.IsZero())
	assert.Equal(t, corev1.PodPending, a.Status.Phase)
	assert.Less(t, rv(t, a), rv(t, b))
	assert.Empty(t, in.Name, "the caller's object is not modified")

	_, err = pods.Create(t.Context(), pod("", ""), metav1.CreateOptions{})
	assert.True(t, apierrors.IsBadRequest(err), "no name and no generateName")
	_, err = pods.Create(t.Context(), pod(a.Name, ""), metav1.CreateOptions{})
	assert.True(t, apierrors.IsAlreadyExists(err))

	list, err := pods.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, b.ResourceVersion, list.ResourceVersion, "List reports the latest version")
}

func TestUpdateConflictsAndSubresources(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	rsc := c.Clientset.AppsV1().ReplicaSets(ns)
	one := int32(1)
	rs, err := rsc.Create(t.Context(), &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1.ReplicaSetSpec{Replicas: &one},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), rs.Generation)

	st := rs.DeepCopy()
	st.Status.Replicas = 7
	st.Spec.Replicas = nil // ignored by a status update
	updated, err := rsc.UpdateStatus(t.Context(), st, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(7), updated.Status.Replicas)
	assert.Equal(t, &one, updated.Spec.Replicas)
	assert.Equal(t, int64(1), updated.Generation, "a status write does not bump the generation")

	_, err = rsc.UpdateStatus(t.Context(), st, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsConflict(err), "stale resourceVersion")

	spec := updated.DeepCopy()
	two := int32(2)
	spec.Spec.Replicas = &two
	spec.Status.Replicas = 0 // ignored by a main-resource update
	updated, err = rsc.Update(t.Context(), spec, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(2), updated.Generation, "a spec change bumps the generation")
	assert.Equal(t, int32(7), updated.Status.Replicas)

	patched, err := rsc.Patch(t.Context(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), patched.Generation)
	_, err = rsc.Patch(t.Context(), "web", types.StrategicMergePatchType, []byte(`{"metadata":{"uid":"other"}}`), metav1.PatchOptions{})
	assert.True(t, apierrors.IsConflict(err), "uid precondition in a patch")
}

func TestGracefulPodDeletion(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	pods := c.Clientset.CoreV1().Pods(ns)
	scheduled := pod("scheduled", "")
	scheduled.Spec.NodeName = "node-1"
	_, err := pods.Create(t.Context(), scheduled, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = pods.Create(t.Context(), pod("unscheduled", ""), metav1.CreateOptions{})
	require.NoError(t, err)

	require.NoError(t, pods.Delete(t.Context(), "scheduled", metav1.DeleteOptions{}))
	got, err := pods.Get(t.Context(), "scheduled", metav1.GetOptions{})
	require.NoError(t, err, "a scheduled pod lingers as terminating")
	assert.NotNil(t, got.DeletionTimestamp)
	require.NoError(t, pods.Delete(t.Context(), "scheduled", metav1.DeleteOptions{}), "deleting again is a no-op")

	require.NoError(t, pods.Delete(t.Context(), "unscheduled", metav1.DeleteOptions{}))
	_, err = pods.Get(t.Context(), "unscheduled", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "an unscheduled pod goes at once")

	var zero int64
	require.NoError(t, pods.Delete(t.Context(), "scheduled", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	_, err = pods.Get(t.Context(), "scheduled", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
	s := c.Stats()
	assert.Equal(t, 1, s.PodsTerminating)
	assert.Equal(t, 2, s.PodsDeleted)
}

func TestFaults(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{CreatePod: 0.5})
	failed := 0
	for range 40 {
		if _, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod("", "p-"), metav1.CreateOptions{}); err != nil {
			require.True(t, apierrors.IsInternalError(err))
			failed++
		}
	}
	assert.Positive(t, failed)
	assert.Less(t, failed, 40)
	assert.Equal(t, failed, c.Stats().FaultsInjected)
	assert.Equal(t, 40-failed, c.Stats().PodsCreated, "a failed create stores nothing")

	c.SetFaults(fakecluster.Faults{CreatePodLost: 1})
	_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod("lost", ""), metav1.CreateOptions{})
	require.True(t, apierrors.IsServerTimeout(err))
	_, err = c.Clientset.CoreV1().Pods(ns).Get(t.Context(), "lost", metav1.GetOptions{})
	assert.NoError(t, err, "a lost create is stored anyway")
}

// An informer sees every write in resourceVersion order, including removals
// (preceded by a MODIFIED event with a fresh version), and its store
// version never goes backwards — even with more writes than the fake
// watcher's 100-event buffer, which would panic without flow control.
func TestInformerSeesOrderedVersions(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	factory := informers.NewSharedInformerFactory(c.Clientset, 0)
	inf := factory.Core().V1().Pods().Informer()
	var (
		mu   sync.Mutex
		last int64
		bad  int
	)
	record := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		v, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
		mu.Lock()
		defer mu.Unlock()
		if v < last {
			bad++
		}
		last = max(last, v)
	}
	_, err := inf.AddEventHandler(handlerFuncs(record))
	require.NoError(t, err)
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		require.True(t, ok, "the %v informer did not sync", typ)
	}

	pods := c.Clientset.CoreV1().Pods(ns)
	for i := range 300 {
		p, err := pods.Create(t.Context(), pod("", "p-"), metav1.CreateOptions{})
		require.NoError(t, err)
		if i%3 == 0 {
			require.NoError(t, pods.Delete(t.Context(), p.Name, metav1.DeleteOptions{}))
		}
	}
	list, err := pods.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	want, err := strconv.ParseInt(list.ResourceVersion, 10, 64)
	require.NoError(t, err)
	seen := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
	ok := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if seen() == want {
			ok = true
			break
		}
	}
	// Handlers run after the store applied the event: it holds the latest
	// write too, and (from client-go v0.36, whose stores track a version)
	// its version is the latest.
	require.True(t, ok, "the handler reaches the latest version")
	store := inf.GetIndexer()
	if storeversion.Tracked(store) {
		assert.Equal(t, list.ResourceVersion, storeversion.Of(store)(), "the store's version is the latest")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Zero(t, bad, "versions arrive in order")
	assert.Equal(t, 200, len(store.List()))
}

type handlerFuncs func(obj any)

func (f handlerFuncs) OnAdd(obj any, _ bool) { f(obj) }

func (f handlerFuncs) OnUpdate(_, obj any) { f(obj) }
func (f handlerFuncs) OnDelete(obj any)    { f(obj) }

// A watch started from a list's resourceVersion replays every write made
// after that list in version order — modifications and removals included —
// as an API server's watch cache does. The reflector lists, then watches from
// the list's version; writes that land in between must neither be lost nor
// be reordered.
func TestWatchFromVersionReplaysInOrder(t *testing.T) {
	defer fakecluster.SetHistorySize(64)()
	c := fakecluster.New(1, fakecluster.Faults{})
	pods := c.Clientset.CoreV1().Pods(ns)
	before, err := pods.Create(t.Context(), pod("before", ""), metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := pods.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	for i := range 20 {
		_, err := pods.Create(t.Context(), pod("p-"+strconv.Itoa(i), ""), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, pods.Delete(t.Context(), before.Name, metav1.DeleteOptions{}))

	w, err := pods.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	var got []string
	last, err := strconv.ParseInt(list.ResourceVersion, 10, 64)
	require.NoError(t, err)
	for range 22 { // 20 creates, then the removal's MODIFIED and DELETED
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-time.After(10 * time.Second): // a hang guard, not a timing assertion
			t.Fatalf("only %d events replayed: %v", len(got), got)
		}
		p := ev.Object.(*corev1.Pod)
		assert.GreaterOrEqual(t, rv(t, p), last, "versions never go backwards")
		last = rv(t, p)
		got = append(got, string(ev.Type)+" "+p.Name)
	}
	want := []string{}
	for i := range 20 {
		want = append(want, "ADDED p-"+strconv.Itoa(i))
	}
	want = append(want, "MODIFIED before", "DELETED before")
	assert.Equal(t, want, got)
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("unexpected event %v", ev)
	default:
	}

	w.Stop()
	for i := range 64 { // push the list's version out of the retained history
		_, err := pods.Create(t.Context(), pod("q-"+strconv.Itoa(i), ""), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = pods.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	assert.True(t, apierrors.IsResourceExpired(err), "a version older than the history is expired (410), so a reflector relists: %v", err)
}
