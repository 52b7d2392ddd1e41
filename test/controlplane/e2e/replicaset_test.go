package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// holdFinalizer keeps deleted pods terminating until the test removes it
// (kwok deletes a pod with a deletion timestamp, which a finalizer blocks).
const holdFinalizer = "e2e.reconcilekit.dev/hold"

const convergeTimeout = 3 * time.Minute

func newReplicaSet(name string, replicas int32, minReadySeconds int32, finalizers ...string) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr.To(replicas),
			MinReadySeconds: minReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Finalizers: finalizers},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
}

// rsEnv is one scenario's namespace on a control plane, with the examples'
// ReplicaSet controller running on it and every pod watched.
type rsEnv struct {
	t      *testing.T
	ctx    context.Context
	cp     *controlplane.ControlPlane
	client kubernetes.Interface
	ns     string
	pods   *podWatch
	ctrl   *proc
	// statuses is every ReplicaSet status seen, per name, in order.
	mu       sync.Mutex
	statuses map[string][]appsv1.ReplicaSetStatus
}

func newRSEnv(t *testing.T, cp *controlplane.ControlPlane, controllerArgs ...string) *rsEnv {
	t.Helper()
	return newRSEnvAs(t, cp, "", "", controllerArgs...)
}

// newRSEnvAs is newRSEnv with the controller running as user, whom the
// ClusterRole role is bound to in the namespace (rbac_test.go's bindRole);
// user "" is the admin.
func newRSEnvAs(t *testing.T, cp *controlplane.ControlPlane, user, role string, controllerArgs ...string) *rsEnv {
	t.Helper()
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	e := &rsEnv{t: t, ctx: ctx, cp: cp, client: client, statuses: map[string][]appsv1.ReplicaSetStatus{}}
	e.ns = newNamespace(t, ctx, client)
	if user != "" {
		kubeconfig := bindRole(t, cp, "replicaset", role, user, e.ns)
		controllerArgs = append([]string{"-kubeconfig", kubeconfig}, controllerArgs...)
	}
	e.pods = watchPods(t, ctx, client, e.ns)
	e.watchStatuses()
	e.ctrl = startRSController(t, cp, e.ns, controllerArgs...)
	return e
}

func (e *rsEnv) watchStatuses() {
	ctx, cancel := context.WithCancel(e.ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(e.client, 0, informers.WithNamespace(e.ns))
	inf := factory.Apps().V1().ReplicaSets().Informer()
	record := func(obj any) {
		rs := obj.(*appsv1.ReplicaSet)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.statuses[rs.Name] = append(e.statuses[rs.Name], rs.Status)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }})
	require.NoError(e.t, err)
	factory.Start(ctx.Done())
	e.t.Cleanup(func() { cancel(); factory.Shutdown() })
}

func (e *rsEnv) seenStatuses(name string) []appsv1.ReplicaSetStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.statuses[name])
}

func (e *rsEnv) create(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	e.t.Helper()
	e.pods.allow("ReplicaSet/"+rs.Name, int(*rs.Spec.Replicas))
	out, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, rs, metav1.CreateOptions{})
	require.NoError(e.t, err)
	return out
}

// scale sets spec.replicas; when scaling up it first raises the bound on
// live pods, when scaling down the old bound stays until the test lowers it.
func (e *rsEnv) scale(name string, replicas int) *appsv1.ReplicaSet {
	e.t.Helper()
	owner := "ReplicaSet/" + name
	e.pods.mu.Lock()
	if replicas > e.pods.allowed[owner] {
		e.pods.allowed[owner] = replicas
	}
	e.pods.mu.Unlock()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	rs, err := e.client.AppsV1().ReplicaSets(e.ns).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(e.t, err)
	return rs
}

// want is the status a converged ReplicaSet must show.
type want struct {
	replicas, ready, available int32
	terminating                *int32
	skipReady                  bool // after a kube-apiserver restart kwok may leave pods unready
}

func (w want) String() string {
	t := "nil"
	if w.terminating != nil {
		t = fmt.Sprint(*w.terminating)
	}
	return fmt.Sprintf("replicas %d ready %d available %d terminating %s", w.replicas, w.ready, w.available, t)
}

func describe(rs *appsv1.ReplicaSet) string {
	s := rs.Status
	t := "nil"
	if s.TerminatingReplicas != nil {
		t = fmt.Sprint(*s.TerminatingReplicas)
	}
	return fmt.Sprintf("generation %d observedGeneration %d replicas %d ready %d available %d terminating %s fullyLabeled %d conditions %v",
		rs.Generation, s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.AvailableReplicas, t, s.FullyLabeledReplicas, s.Conditions)
}

// converge waits until the ReplicaSet's status is w for its current
// generation and its live pods are exactly w.replicas.
func (e *rsEnv) converge(name string, w want) *appsv1.ReplicaSet {
	e.t.Helper()
	var last *appsv1.ReplicaSet
	waitFor(e.t, e.ctx, convergeTimeout, fmt.Sprintf("%s/%s: %v", e.ns, name, w), func(ctx context.Context) (bool, string, error) {
		rs, err := e.client.AppsV1().ReplicaSets(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		last = rs
		s := rs.Status
		livePods := len(e.pods.live("ReplicaSet/" + name))
		seen := fmt.Sprintf("%s; live pods %d", describe(rs), livePods)
		ok := s.ObservedGeneration == rs.Generation && s.Replicas == w.replicas &&
			ptr.Equal(s.TerminatingReplicas, w.terminating) && livePods == int(w.replicas)
		if !w.skipReady {
			ok = ok && s.ReadyReplicas == w.ready && s.AvailableReplicas == w.available &&
				s.FullyLabeledReplicas == w.replicas
		}
		return ok, seen, nil
	})
	return last
}

// releaseHeld removes holdFinalizer from every pod that has it.
func (e *rsEnv) releaseHeld() int {
	e.t.Helper()
	n := 0
	for _, p := range e.pods.all() {
		if !slices.Contains(p.Finalizers, holdFinalizer) || p.DeletionTimestamp == nil {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"finalizers":      slices.DeleteFunc(slices.Clone(p.Finalizers), func(f string) bool { return f == holdFinalizer }),
			"resourceVersion": p.ResourceVersion,
		}})
		require.NoError(e.t, err)
		_, err = e.client.CoreV1().Pods(e.ns).Patch(e.ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue // gone, or changed: the next round sees it
		}
		require.NoError(e.t, err)
		n++
	}
	return n
}

// releaseAllHeld removes holdFinalizer from the terminating pods until none
// is left.
func (e *rsEnv) releaseAllHeld() {
	e.t.Helper()
	waitFor(e.t, e.ctx, convergeTimeout, "held pods released", func(context.Context) (bool, string, error) {
		e.releaseHeld()
		held := 0
		for _, p := range e.pods.all() {
			if p.DeletionTimestamp != nil && slices.Contains(p.Finalizers, holdFinalizer) {
				held++
			}
		}
		return held == 0, fmt.Sprintf("%d held pods", held), nil
	})
}

// TestReplicaSetScale: 0 → 20 → 5 → 0 with every status field as upstream
// computes it. minReadySeconds makes availability lag readiness; a finalizer
// on the template keeps deleted pods terminating, so that
// status.terminatingReplicas (gate DeploymentReplicaSetTerminatingReplicas,
// on by default in v1.37) is seen non-zero and then back at zero. The
// controller runs as a user bound to exactly the example's role
// (examples/replicaset/config/rbac), which RBAC never refuses anything.
//
// The controller's /readyz is ok only once its caches synced, and its
// metrics, scraped at the end, count exactly the 20 creates and 20 deletes
// the test's pod watch saw (the test deletes no pod itself), and as many
// expectation rounds ended as were raised, none by expiry.
func TestReplicaSetScale(t *testing.T) {
	cp := sharedControlPlane(t)
	e := newRSEnvAs(t, cp, rsUser, applyClusterRole(t, cp, "replicaset", nil))
	const minReady = 8
	e.readyAfterSync()
	e.create(newReplicaSet("web", 0, minReady, holdFinalizer))
	e.converge("web", want{terminating: ptr.To[int32](0)})

	e.scale("web", 20)
	e.converge("web", want{replicas: 20, ready: 20, available: 20, terminating: ptr.To[int32](0)})
	lagged := slices.ContainsFunc(e.seenStatuses("web"), func(s appsv1.ReplicaSetStatus) bool {
		return s.ReadyReplicas > s.AvailableReplicas
	})
	assert.True(t, lagged, "no status showed ready pods not yet available (minReadySeconds %d)", minReady)

	e.scale("web", 5)
	e.converge("web", want{replicas: 5, ready: 5, available: 5, terminating: ptr.To[int32](15)})
	e.pods.allow("ReplicaSet/web", 5)
	e.releaseAllHeld()
	e.converge("web", want{replicas: 5, ready: 5, available: 5, terminating: ptr.To[int32](0)})

	e.scale("web", 0)
	e.converge("web", want{terminating: ptr.To[int32](5)})
	e.pods.allow("ReplicaSet/web", 0)
	e.releaseAllHeld()
	e.converge("web", want{terminating: ptr.To[int32](0)})
	waitFor(t, e.ctx, convergeTimeout, "no pods left", func(context.Context) (bool, string, error) {
		n := len(e.pods.all())
		return n == 0, fmt.Sprintf("%d pods", n), nil
	})
	waitEvent(t, e.ctx, e.client, e.ns, "SuccessfulCreate")
	assertNotRefused(t, cp, rsUser)
	m := scrape(t, e.ctx, e.ctrl.endpoint(t, e.ctx, "metrics"))
	t.Logf("metrics: %s", m.summary())
	assert.Equal(t, float64(len(e.pods.everOwnedBy("ReplicaSet/web"))), m.podsCreated(), "pods created: metrics vs the pod watch")
	assert.Equal(t, 20.0, m.podsCreated())
	assert.Equal(t, 20.0, m.podsDeleted(), "pods deleted: 15 then 5, all by the controller")
	assert.Equal(t, m.sum("reconcilekit_expectations_raised_total", nil), m.resolved(), "rounds raised and ended")
	assert.Zero(t, m.sum("reconcilekit_expectations_resolved_total", map[string]string{"resolution": "expired"}))
	assert.Positive(t, m.sum("reconcilekit_syncs_total", map[string]string{"result": "ok"}))
	assert.Positive(t, m.sum("workqueue_adds_total", map[string]string{"name": "replicaset"}))
	assert.False(t, e.ctrl.exited(), "the controller exited")
}

// podLike returns a bare pod with the ReplicaSet's template labels.
func podLike(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// TestReplicaSetDisruption: pods deleted behind the controller's back are
// replaced; an orphan that matches is adopted (and the surplus deleted); a
// pod whose labels stop matching is released and replaced; a matching pod
// controlled by another owner is never touched. The controller runs under
// the example's role, as in TestReplicaSetScale: adoption and release
// (patches that set and remove a controller reference) need nothing more.
func TestReplicaSetDisruption(t *testing.T) {
	cp := sharedControlPlane(t)
	e := newRSEnvAs(t, cp, rsUser, applyClusterRole(t, cp, "replicaset", nil))
	const owner = "ReplicaSet/web"
	rs := e.create(newReplicaSet("web", 10, 0))
	ready := want{replicas: 10, ready: 10, available: 10, terminating: ptr.To[int32](0)}
	e.converge("web", ready)
	labels := rs.Spec.Template.Labels

	// Deleted behind its back: replaced.
	victims := e.pods.live(owner)[:3]
	for _, name := range victims {
		require.NoError(t, e.client.CoreV1().Pods(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}))
	}
	waitFor(t, e.ctx, convergeTimeout, "the deleted pods gone and replaced", func(context.Context) (bool, string, error) {
		livePods := e.pods.live(owner)
		for _, v := range victims {
			if slices.Contains(livePods, v) {
				return false, fmt.Sprintf("%s still live", v), nil
			}
		}
		return len(livePods) == 10, fmt.Sprintf("%d live", len(livePods)), nil
	})
	e.converge("web", ready)

	// An orphan: adopted, then one pod too many is deleted.
	e.pods.allow(owner, 11) // the orphan counts once adopted
	_, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, podLike("orphan", labels), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, e.ctx, convergeTimeout, "the orphan adopted", func(context.Context) (bool, string, error) {
		return e.pods.everOwnedBy(owner)["orphan"], "not yet owned", nil
	})
	e.converge("web", ready)
	e.pods.allow(owner, 10)

	// Released by a label change: the pod loses its owner reference and is replaced.
	released := e.pods.live(owner)[0]
	_, err = e.client.CoreV1().Pods(e.ns).Patch(e.ctx, released, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"app":"elsewhere"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitFor(t, e.ctx, convergeTimeout, "the relabelled pod released", func(context.Context) (bool, string, error) {
		p := e.pods.get(released)
		if p == nil {
			return false, "gone", fmt.Errorf("the released pod %s was deleted", released)
		}
		return metav1.GetControllerOf(p) == nil, fmt.Sprintf("owner references %v", p.OwnerReferences), nil
	})
	e.converge("web", ready)
	assert.True(t, live(e.pods.get(released)), "the released pod is still running")

	// Controlled by another owner (a ConfigMap, so that the garbage collector
	// keeps it): never adopted, counted or deleted, even across a scale-up
	// and a scale-down.
	cm, err := e.client.CoreV1().ConfigMaps(e.ns).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-owner"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	foreign := podLike("foreign", labels)
	foreign.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: ptr.To(true)}}
	foreign, err = e.client.CoreV1().Pods(e.ns).Create(e.ctx, foreign, metav1.CreateOptions{})
	require.NoError(t, err)
	e.scale("web", 12)
	e.converge("web", want{replicas: 12, ready: 12, available: 12, terminating: ptr.To[int32](0)})
	e.scale("web", 4)
	e.converge("web", want{replicas: 4, ready: 4, available: 4, terminating: ptr.To[int32](0)})
	e.pods.allow(owner, 4)
	got, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "foreign", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, got.DeletionTimestamp, "the foreign pod was deleted")
	assert.Equal(t, foreign.OwnerReferences, got.OwnerReferences, "the foreign pod's owners changed")
	assert.Equal(t, foreign.Labels, got.Labels)
	assert.False(t, e.pods.everOwnedBy(owner)["foreign"], "the foreign pod was adopted")
	assertNotRefused(t, cp, rsUser)
	assert.False(t, e.ctrl.exited(), "the controller exited")
}

// deleteOwner deletes the ReplicaSet with the given propagation and checks
// that the garbage collector removes its pods and that the controller never
// creates another one.
func testOwnerDeletion(t *testing.T, propagation metav1.DeletionPropagation) {
	e := newRSEnv(t, sharedControlPlane(t))
	const owner = "ReplicaSet/web"
	e.create(newReplicaSet("web", 15, 0))
	e.converge("web", want{replicas: 15, ready: 15, available: 15, terminating: ptr.To[int32](0)})
	before := e.pods.everOwnedBy(owner)
	require.Len(t, before, 15)

	require.NoError(t, e.client.AppsV1().ReplicaSets(e.ns).Delete(e.ctx, "web",
		metav1.DeleteOptions{PropagationPolicy: &propagation}))
	waitFor(t, e.ctx, convergeTimeout, "the ReplicaSet and its pods gone", func(ctx context.Context) (bool, string, error) {
		_, err := e.client.AppsV1().ReplicaSets(e.ns).Get(ctx, "web", metav1.GetOptions{})
		n := len(e.pods.all())
		return apierrors.IsNotFound(err) && n == 0, fmt.Sprintf("get: %v; %d pods", err, n), nil
	})
	assert.Equal(t, before, e.pods.everOwnedBy(owner), "pods were created after the ReplicaSet was deleted")
	// The controller has forgotten the ReplicaSet: a new one of the same
	// name starts from scratch.
	e.create(newReplicaSet("web", 2, 0))
	e.converge("web", want{replicas: 2, ready: 2, available: 2, terminating: ptr.To[int32](0)})
	assert.False(t, e.ctrl.exited(), "the controller exited")
}

func TestReplicaSetDeletedInBackground(t *testing.T) {
	testOwnerDeletion(t, metav1.DeletePropagationBackground)
}

func TestReplicaSetDeletedInForeground(t *testing.T) {
	testOwnerDeletion(t, metav1.DeletePropagationForeground)
}

// waitLive waits until owner has at least n live pods: the middle of a scale-up.
func (e *rsEnv) waitLive(owner string, n int) {
	e.t.Helper()
	waitFor(e.t, e.ctx, convergeTimeout, fmt.Sprintf("%d live pods of %s", n, owner), func(context.Context) (bool, string, error) {
		got := len(e.pods.live(owner))
		return got >= n, fmt.Sprintf("%d live", got), nil
	})
}

// quietFor is how long the pods of an owner must not change before
// waitQuiet returns: far above a pod create's latency on the test's
// control plane, far below convergeTimeout.
const quietFor = 3 * time.Second

// waitQuiet waits until the number of pods ever created for owner has not
// changed for quietFor, and returns it.
func (e *rsEnv) waitQuiet(owner string) int {
	e.t.Helper()
	last := len(e.pods.everOwnedBy(owner))
	since := time.Now()
	waitFor(e.t, e.ctx, convergeTimeout, fmt.Sprintf("no new pod of %s for %s", owner, quietFor), func(context.Context) (bool, string, error) {
		got := len(e.pods.everOwnedBy(owner))
		if got != last {
			last = got
			since = time.Now()
		}
		return time.Since(since) >= quietFor, fmt.Sprintf("%d pods ever created", got), nil
	})
	return last
}

// modes are the controller's two expectation modes: upstream's counters and
// 5-minute timeout, and reconcilekit's exact expectations (the demo's default).
var modes = []struct{ name, arg string }{{"upstream", "-exact=false"}, {"exact", "-exact=true"}}

// TestReplicaSetNamespaceDeletedDuringScaleUp: creates that fail because the
// namespace is terminating count as successes, so the controller
// sends at most one create per desired pod, the namespace goes away and
// the controller keeps running.
func TestReplicaSetNamespaceDeletedDuringScaleUp(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			testNamespaceDeleted(t, m.arg)
		})
	}
}

func testNamespaceDeleted(t *testing.T, mode string) {
	cp := sharedControlPlane(t)
	e := newRSEnv(t, cp, mode)
	const owner, n = "ReplicaSet/web", 300
	writesBefore, err := cp.Writes()
	require.NoError(t, err)
	e.create(newReplicaSet("web", n, 0))
	e.waitLive(owner, 20)
	require.NoError(t, e.client.CoreV1().Namespaces().Delete(e.ctx, e.ns, metav1.DeleteOptions{}))
	waitFor(t, e.ctx, convergeTimeout, "namespace "+e.ns+" gone", func(ctx context.Context) (bool, string, error) {
		ns, err := e.client.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return false, fmt.Sprintf("phase %s, conditions %v", ns.Status.Phase, ns.Status.Conditions), nil
	})
	writes, err := cp.Writes()
	require.NoError(t, err)
	d := writes.Since(writesBefore)
	creates, created := d.Sum(controlplane.AdminUser, "create", "pods", "", 0), d.Sum(controlplane.AdminUser, "create", "pods", "", 201)
	// A sync deferred by the consistency gate is not an error of
	// the controller's: every status write is followed by one until the
	// ReplicaSet cache shows it, as upstream since 1.36.
	deferred := e.ctrl.countSyncs("sync deferred")
	syncErrors := e.ctrl.countSyncs("err=") - e.ctrl.countSyncs("err=<nil>") - deferred
	t.Logf("pod creates: %d (%d created, %d refused); syncs with an error: %d, deferred: %d; most live pods %d",
		creates, created, creates-created, syncErrors, deferred, e.pods.maxLive(owner))
	assert.LessOrEqual(t, creates, n, "more create requests than desired pods: the refused creates were retried")
	assert.LessOrEqual(t, syncErrors, 20, "an error storm")
	assert.False(t, e.ctrl.exited(), "the controller exited")
}

// TestReplicaSetControllerRestart: the controller process is killed in the
// middle of a scale-up and started again; the new one rebuilds its
// expectations from the informers' lists, so it creates exactly the missing
// pods (every pod ever created is one of the final ones).
func TestReplicaSetControllerRestart(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testControllerRestart(t, m.arg) })
	}
}

func testControllerRestart(t *testing.T, mode string) {
	e := newRSEnv(t, sharedControlPlane(t), mode)
	const owner, n = "ReplicaSet/web", 300
	e.create(newReplicaSet("web", n, 0))
	e.waitLive(owner, 30)
	e.ctrl.kill()
	// Creates the killed process had already sent still land after its
	// death; a successor that lists before they do sees fewer pods than
	// exist and makes up the difference, whatever its expectations (a
	// killed process cannot take back a request in flight). This test is
	// about the successor starting from what it finds, so it starts once
	// the pod set has held still for quietFor.
	mid := e.waitQuiet(owner)
	e.ctrl = startRSController(t, e.cp, e.ns, mode)
	e.converge("web", want{replicas: n, ready: n, available: n, terminating: ptr.To[int32](0)})
	t.Logf("killed the controller at %d pods ever created", mid)
	assert.Len(t, e.pods.everOwnedBy(owner), n, "pods were created beyond the desired count")
	assert.False(t, e.ctrl.exited(), "the controller exited")
}

// TestReplicaSetAPIServerRestart: kube-apiserver is killed in the middle of
// a scale-up and started again; the controller's watches recover and it
// converges without an extra pod. Readiness is not asserted: kwok v0.8.0
// does not retry a pod stage whose patch failed while kube-apiserver was
// down, so some pods may stay unready.
func TestReplicaSetAPIServerRestart(t *testing.T) {
	cp := freshControlPlane(t)
	e := newRSEnv(t, cp)
	const owner, n = "ReplicaSet/web", 300
	e.create(newReplicaSet("web", n, 0))
	e.waitLive(owner, 30)
	require.NoError(t, cp.KillComponent(controlplane.KubeAPIServer))
	mid := len(e.pods.live(owner))
	require.NoError(t, cp.StartComponent(e.ctx, controlplane.KubeAPIServer))
	e.converge("web", want{replicas: n, terminating: ptr.To[int32](0), skipReady: true})
	// A create whose response was lost when kube-apiserver died may be
	// retried under another name and the surplus deleted; the bound on live
	// pods (checked by the pod watch) is what must hold.
	t.Logf("killed kube-apiserver at %d live pods; pods ever created: %d", mid, len(e.pods.everOwnedBy(owner)))
	assert.False(t, e.ctrl.exited(), "the controller exited")
}

// TestReplicaSetStatusConflicts: while the controller scales up, another
// client keeps updating the ReplicaSet's metadata (so the controller's
// status updates meet conflicts) and writing a wrong status; once it stops,
// the controller converges to the right status.
func TestReplicaSetStatusConflicts(t *testing.T) {
	cp := sharedControlPlane(t)
	e := newRSEnv(t, cp)
	const n = 100
	writesBefore, err := cp.Writes()
	require.NoError(t, err)
	e.create(newReplicaSet("web", n, 0))
	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	var writerWrites int
	wg.Go(func() {
		rsc := e.client.AppsV1().ReplicaSets(e.ns)
		tick := time.NewTicker(20 * time.Millisecond) // pacing the writer, not waiting
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rs, err := rsc.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				continue
			}
			if i%2 == 0 {
				metav1.SetMetaDataAnnotation(&rs.ObjectMeta, "e2e.reconcilekit.dev/tick", fmt.Sprint(i))
				_, err = rsc.Update(ctx, rs, metav1.UpdateOptions{})
			} else {
				rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 7, 7, 7
				_, err = rsc.UpdateStatus(ctx, rs, metav1.UpdateOptions{})
			}
			if err == nil {
				writerWrites++
			}
		}
	})
	e.waitLive("ReplicaSet/web", n)
	stop()
	wg.Wait()
	e.converge("web", want{replicas: n, ready: n, available: n, terminating: ptr.To[int32](0)})
	writes, err := cp.Writes()
	require.NoError(t, err)
	d := writes.Since(writesBefore)
	t.Logf("the other client's successful writes: %d; ReplicaSet status updates (all clients): %d, of them conflicts: %d",
		writerWrites, d.Sum(controlplane.AdminUser, "update", "replicasets", "status", 0),
		d.Sum(controlplane.AdminUser, "update", "replicasets", "status", 409))
	assert.Len(t, e.pods.everOwnedBy("ReplicaSet/web"), n, "pods were created beyond the desired count")
	assert.False(t, e.ctrl.exited(), "the controller exited")
}
