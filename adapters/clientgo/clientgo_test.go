package clientgo_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const ns = "default"

func replicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
			},
		},
	}
}

// env is a running controller over a fake cluster with real informers.
type env struct {
	cluster *fakecluster.Cluster
	ctrl    *reconcile.Controller[*appsv1.ReplicaSet]
	mu      sync.Mutex
	syncs   []reconcile.SyncResult
}

func start(t *testing.T, wire bool) *env {
	t.Helper()
	e := &env{cluster: fakecluster.New(1, fakecluster.Faults{})}
	factory := informers.NewSharedInformerFactory(e.cluster.Clientset, 0)
	cfg := clientgo.ReplicaSets(e.cluster.Clientset, factory, nil)
	cfg.Clock = fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) // never advanced: expectations are satisfied by events only
	ctrl, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	e.ctrl = ctrl
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	pods, owners := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	if wire {
		require.NoError(t, clientgo.Register(ctrl, pods, owners, q))
	} else { // owners only: pod events never reach the Controller
		_, err := owners.AddEventHandler(clientgo.OwnerHandler(ctrl, q))
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := clientgo.Worker{Queue: q, Sync: ctrl.Sync, Synced: []cache.InformerSynced{pods.HasSynced, owners.HasSynced}, Done: func(_ string, res reconcile.SyncResult, _ error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.syncs = append(e.syncs, res)
		}}.Run(ctx, 2)
		assert.NoError(t, err)
	}()
	t.Cleanup(func() { cancel(); <-done; factory.Shutdown() })
	return e
}

// waitForCaches waits until every informer factory started has synced;
// it fails the test if one has not when ctx ends.
func waitForCaches(t *testing.T, ctx context.Context, factory informers.SharedInformerFactory) {
	t.Helper()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		require.True(t, ok, "the %v informer did not sync", typ)
	}
}

// eventually waits for cond, polling; the bound only guards against a hang.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal(msg)
}

func (e *env) pods(t *testing.T) []corev1.Pod {
	list, err := e.cluster.Clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return list.Items
}

// Two rounds of creates complete with a frozen clock: the second round can
// only start once the first round's creations were observed by the pod
// handler (expiry is impossible). Deleting the owner leaves nothing behind.
func TestControllerConvergesByEventsAndForgetsDeletedOwners(t *testing.T) {
	e := start(t, true)
	rsc := e.cluster.Clientset.AppsV1().ReplicaSets(ns)
	_, err := rsc.Create(t.Context(), replicaSet("web", 3), metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool { return len(e.pods(t)) == 3 }, "3 pods")
	rs, err := rsc.Get(t.Context(), "web", metav1.GetOptions{})
	require.NoError(t, err)
	five := int32(5)
	rs.Spec.Replicas = &five
	_, err = rsc.Update(t.Context(), rs, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool { return len(e.pods(t)) == 5 }, "a second round of creates needs the first one observed")
	for _, p := range e.pods(t) {
		ref := metav1.GetControllerOf(&p)
		require.NotNil(t, ref)
		assert.Equal(t, rs.UID, ref.UID)
	}
	eventually(t, func() bool {
		got, _ := rsc.Get(t.Context(), "web", metav1.GetOptions{})
		return got.Status.Replicas == 5 && got.Status.ObservedGeneration == got.Generation
	}, "status written")

	require.NoError(t, rsc.Delete(t.Context(), "web", metav1.DeleteOptions{}))
	eventually(t, func() bool { return e.ctrl.Len() == 0 }, "nothing remembered for a deleted owner")
}

// Without the pod handler the same round never completes: the test above
// fails if a piece of the wiring is missing.
func TestMissingPodHandlerStalls(t *testing.T) {
	e := start(t, false)
	_, err := e.cluster.Clientset.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet("web", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool { return len(e.pods(t)) == 2 }, "the first round creates")
	require.NoError(t, e.cluster.Clientset.CoreV1().Pods(ns).Delete(t.Context(), e.pods(t)[0].Name, metav1.DeleteOptions{}))
	// Sync again: unobserved creations keep the owner unsatisfied. The
	// consistency gate may defer this sync until the ReplicaSet informer
	// has the worker's last status write: sync until it is not.
	var res reconcile.SyncResult
	eventually(t, func() bool {
		var stale *expectations.StaleCacheError
		res, err = e.ctrl.Sync(t.Context(), ns+"/web")
		return !errors.As(err, &stale)
	}, "a sync not deferred by the gate")
	require.NoError(t, err)
	assert.False(t, res.Expectations.Satisfied, "creations never observed: the owner waits for the expiry")
}

// Orphans matching the selector are adopted; owned pods that stop matching
// are released, through PodControl.PatchPod.
func TestAdoptAndRelease(t *testing.T) {
	e := start(t, true)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
	}
	_, err := e.cluster.Clientset.CoreV1().Pods(ns).Create(t.Context(), orphan, metav1.CreateOptions{})
	require.NoError(t, err)
	rs, err := e.cluster.Clientset.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet("web", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool {
		p, err := e.cluster.Clientset.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{})
		return err == nil && metav1.IsControlledBy(p, rs)
	}, "the orphan is adopted")
	// The orphan counts: a pod created before the cache showed it is
	// removed again.
	eventually(t, func() bool { return len(e.pods(t)) == 1 }, "one pod")
	if _, err := e.cluster.Clientset.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{}); err != nil {
		t.Skip("the surplus pod chosen for deletion was the adopted orphan")
	}

	p, err := e.cluster.Clientset.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	p.Labels = map[string]string{"app": "other"}
	_, err = e.cluster.Clientset.CoreV1().Pods(ns).Update(t.Context(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool {
		p, err := e.cluster.Clientset.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(p) == nil && len(e.pods(t)) == 2
	}, "the pod is released and replaced")
}

func TestDeletePodUIDPrecondition(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	pc := clientgo.PodControl{Client: c.Clientset}
	pods := c.Clientset.CoreV1().Pods(ns)
	old, err := pods.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, pods.Delete(t.Context(), "p", metav1.DeleteOptions{}))
	_, err = pods.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)

	err = pc.DeletePod(t.Context(), old)
	assert.True(t, apierrors.IsNotFound(err), "the chosen pod is gone; its successor is kept: %v", err)
	_, err = pods.Get(t.Context(), "p", metav1.GetOptions{})
	assert.NoError(t, err, "the pod now under that name is not deleted")
}

func TestPodControlErrors(t *testing.T) {
	cs := fake.NewClientset()
	boom := apierrors.NewInternalError(errors.New("boom"))
	cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, boom })
	err := clientgo.PodControl{Client: cs}.DeletePod(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, UID: "u"}})
	assert.True(t, apierrors.IsInternalError(err), "other errors unchanged")
}

// a failed status write is retried once on a fresh GET; at most two
// updates and one GET; the GET's error wins when it fails; the retry carries
// the status asked for (observedGeneration included) onto the fresh object.
func TestReplicaSetStatusWriterRetry(t *testing.T) {
	rs := replicaSet("web", 1)
	rs.UID, rs.Generation = types.UID("u"), 2
	for _, tc := range []struct {
		name      string
		failures  int // updates that fail with a conflict
		getErr    error
		wantCalls map[string]int
		wantErr   func(error) bool
	}{
		{"R-8.7 first write succeeds", 0, nil, map[string]int{"update/status": 1}, nil},
		{"R-8.7 one retry on a fresh object", 1, nil, map[string]int{"update/status": 2, "get/": 1}, nil},
		{"R-8.7 the second failure is returned", 2, nil, map[string]int{"update/status": 2, "get/": 1}, apierrors.IsConflict},
		{"R-8.7 the GET's error wins", 1, apierrors.NewServiceUnavailable("down"), map[string]int{"update/status": 1, "get/": 1}, apierrors.IsServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(rs.DeepCopy())
			calls := map[string]int{}
			cs.PrependReactor("*", "replicasets", func(a k8stesting.Action) (bool, runtime.Object, error) {
				calls[a.GetVerb()+"/"+a.GetSubresource()]++
				switch {
				case a.GetVerb() == "update" && calls["update/status"] <= tc.failures:
					return true, nil, apierrors.NewConflict(appsv1.Resource("replicasets"), "web", errors.New("stale"))
				case a.GetVerb() == "get" && tc.getErr != nil:
					return true, nil, tc.getErr
				}
				return false, nil, nil
			})
			next := rs.DeepCopy()
			next.Status.Replicas, next.Status.ObservedGeneration = 1, 2
			got, err := clientgo.ReplicaSetStatusWriter{Client: cs}.WriteStatus(t.Context(), next)
			assert.Equal(t, tc.wantCalls, calls)
			if tc.wantErr != nil {
				assert.True(t, tc.wantErr(err), "%v", err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, next.Status, got.Status, "the server's object, with the status asked for")
			stored, err := cs.AppsV1().ReplicaSets(ns).Get(t.Context(), "web", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, int64(2), stored.Status.ObservedGeneration)
		})
	}
	_, err := clientgo.ReplicaSetStatusWriter{}.WriteStatus(t.Context(), rs)
	assert.ErrorContains(t, err, "clientgo: ReplicaSetStatusWriter: nil Client")
}

func TestUnwrap(t *testing.T) {
	p := &corev1.Pod{}
	got, ok := clientgo.Unwrap[*corev1.Pod](cache.DeletedFinalStateUnknown{Key: "k", Obj: p})
	assert.True(t, ok)
	assert.Same(t, p, got)
	_, ok = clientgo.Unwrap[*corev1.Pod]("junk")
	assert.False(t, ok)
}

func TestRegisterRejectsMissingPieces(t *testing.T) {
	assert.Error(t, clientgo.Register[*appsv1.ReplicaSet](nil, nil, nil, nil))
}

// The trap of client-go's plain fake clientset: it ignores generateName, so
// in counted mode only one pod could ever exist. The Controller reports it
// (naming the fix) instead of meeting AlreadyExists forever; the fake
// cluster, which generates names, is the fix.
func TestPlainFakeClientsetIsReported(t *testing.T) {
	rs := replicaSet("web", 2)
	rs.UID = "rs-uid"
	cs := fake.NewClientset(rs)
	factory := informers.NewSharedInformerFactory(cs, 0)
	ctrl, err := reconcile.NewController(clientgo.ReplicaSets(cs, factory, nil))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	waitForCaches(t, ctx, factory)
	_, err = ctrl.Sync(t.Context(), ns+"/web")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GenerateName")
}

// countingQueue counts, per key, the retries and forgets a worker asks of
// its queue.
type countingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu          sync.Mutex
	rateLimited map[string]int
	forgotten   map[string]int
}

func newCountingQueue() *countingQueue {
	return &countingQueue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		rateLimited:                map[string]int{},
		forgotten:                  map[string]int{},
	}
}

func (q *countingQueue) AddRateLimited(key string) {
	q.mu.Lock()
	q.rateLimited[key]++
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddRateLimited(key)
}

func (q *countingQueue) Forget(key string) {
	q.mu.Lock()
	q.forgotten[key]++
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Forget(key)
}

// the runaway probe of issue 32: a ReplicaSet whose selector does
// not match its template's labels (kube-apiserver rejects it; a custom
// resource without validation rules reaches the controller just the same),
// replicas 2, and an orphan its selector matches. Before, every sync
// created the missing pods, the next one released them as not matching
// and created again: 2,018 to 3,196 pods in 2 s. Now every sync creates,
// adopts, releases and deletes nothing, writes the ReplicaFailure condition
// naming the field (once: the later sync finds it written), and is
// terminal: the worker forgets the key instead of retrying it, logs it at
// the default level and counts it as terminal.
func TestInvalidSpecIsTerminalWithItsCondition(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": "wbe"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
	}
	_, err := cl.Clientset.CoreV1().Pods(ns).Create(t.Context(), orphan, metav1.CreateOptions{})
	require.NoError(t, err)
	factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
	cfg, collector := telemetry.Instrument(clientgo.ReplicaSets(cl.Clientset, factory, nil), telemetry.Options{})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(collector))
	ctrl, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	q := newCountingQueue()
	pods, replicaSets := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	require.NoError(t, clientgo.Register(ctrl, pods, replicaSets, q))

	var mu sync.Mutex
	var errs []error
	w := clientgo.Worker{Queue: q, Sync: ctrl.Sync, Metrics: collector, Synced: []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced},
		Done: func(_ string, _ reconcile.SyncResult, err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}}
	syncs := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(errs)
	}
	var logs logLines
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logs.logger()))
	factory.Start(ctx.Done())
	stopped := make(chan struct{})
	go func() { defer close(stopped); assert.NoError(t, w.Run(ctx, 2)) }()

	bad := replicaSet("web", 2)
	bad.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wbe"}} // a typo
	_, err = cl.Clientset.AppsV1().ReplicaSets(ns).Create(t.Context(), bad, metav1.CreateOptions{})
	require.NoError(t, err)
	runaway := func() bool { return cl.Stats().PodsCreated > 1 } // beyond the orphan: stop at once
	condition := func() *appsv1.ReplicaSetCondition {
		rs, err := cl.Clientset.AppsV1().ReplicaSets(ns).Get(t.Context(), "web", metav1.GetOptions{})
		require.NoError(t, err)
		for i := range rs.Status.Conditions {
			if rs.Status.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
				return &rs.Status.Conditions[i]
			}
		}
		return nil
	}
	eventually(t, func() bool { return runaway() || condition() != nil }, "the failure condition is written")
	// The condition's write is an update event of the ReplicaSet: the key
	// is synced once more, and finds the condition written.
	eventually(t, func() bool { return runaway() || syncs() >= 2 && q.Len() == 0 }, "the sync of the status write's event")
	cancel()
	<-stopped
	factory.Shutdown()

	stats := cl.Stats()
	assert.Equal(t, 1, stats.PodsCreated, "no pod created: the orphan is the only pod ever")
	assert.Zero(t, stats.PodsDeleted+stats.PodsTerminating, "no pod deleted")
	got, err := cl.Clientset.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(got), "the orphan its selector matches is not adopted")

	cond := condition()
	require.NotNil(t, cond, "the ReplicaFailure condition is written")
	assert.Equal(t, corev1.ConditionTrue, cond.Status)
	assert.Contains(t, cond.Message, "spec.template.metadata.labels", "the message names the field")
	assert.Equal(t, 1, stats.StatusUpdates, "the condition is written once")

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, errs)
	for _, err := range errs {
		assert.ErrorIs(t, err, reconcile.ErrInvalidSpec)
		assert.ErrorIs(t, err, reconcile.ErrTerminal)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.Zero(t, q.rateLimited[ns+"/web"], "a terminal error is not retried")
	assert.Equal(t, len(errs), q.forgotten[ns+"/web"], "each sync's key is forgotten")
	assert.Equal(t, float64(len(errs)), counter(t, reg, telemetry.SyncsName, "result", telemetry.ResultTerminal))
	assert.Zero(t, counter(t, reg, telemetry.PodCreatesName, "result", "created"))
	lines := logs.matching(`"msg"="Owner spec is invalid`)
	assert.Len(t, lines, len(errs), "one default-level line per sync, naming the field")
	for _, line := range lines {
		assert.NotContains(t, line, `"level"=`, "at the default level")
		assert.Contains(t, line, "spec.template.metadata.labels")
	}
}
