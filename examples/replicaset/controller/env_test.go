package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	cluster "github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
	"github.com/reconcilekit/reconcilekit/podrank"
)

const ns = "test"

var appLabels = map[string]string{"app": "web"}

// env is an in-process cluster with a running kubelet and controller.
type env struct {
	t         *testing.T
	cl        *cluster.Cluster
	ctrl      *controller.Controller
	rsLister  appslisters.ReplicaSetLister
	podLister corelisters.PodLister

	mu      sync.Mutex
	events  map[string]int
	reports []controller.Report
}

type envOptions struct {
	exact  bool
	faults cluster.Faults
	seed   uint64
	fence  func() error
	slots  chan struct{}
	onSync func(controller.Report)
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, events: map[string]int{}}
	e.cl = cluster.New(o.seed, o.faults)
	client := e.cl.Clientset
	ctx, cancel := context.WithCancel(t.Context())

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartEventWatcher(func(ev *corev1.Event) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.events[ev.Reason]++
	})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "test"})

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	rsInf, podInf := factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods()
	ctrl, err := controller.New(client, factory, controller.Options{
		Recorder:  recorder,
		Exact:     o.exact,
		Fence:     o.fence,
		SyncSlots: o.slots,
		// Fast retries keep fault tests short; the policy is the default's shape.
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 50*time.Millisecond),
		OnSync: func(r controller.Report) {
			if o.onSync != nil {
				o.onSync(r)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			e.reports = append(e.reports, r)
		},
	})
	require.NoError(t, err)
	e.ctrl, e.rsLister, e.podLister = ctrl, rsInf.Lister(), podInf.Lister()

	kubelet := cluster.NewKubelet(client, cluster.KubeletOptions{
		Nodes: 3, ReadyDelay: 20 * time.Millisecond, TerminationDelay: 20 * time.Millisecond, Seed: o.seed,
	})
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { kubelet.Run(ctx) })
	wg.Go(func() { _ = ctrl.Run(ctx, 3) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	return e
}

func (e *env) createRS(name string, replicas int32) *appsv1.ReplicaSet {
	e.t.Helper()
	created, err := e.cl.Clientset.AppsV1().ReplicaSets(ns).Create(e.t.Context(), newReplicaSet(name, replicas), metav1.CreateOptions{})
	require.NoError(e.t, err)
	return created
}

func newReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: appLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: appLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
			},
		},
	}
}

func (e *env) scale(name string, replicas int32) {
	e.t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	_, err := e.cl.Clientset.AppsV1().ReplicaSets(ns).Patch(e.t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(e.t, err)
}

// owned returns the active and terminating pods the ReplicaSet controls and
// whose labels match its selector, as the API server has them.
func (e *env) owned(rs *appsv1.ReplicaSet) (active, terminating []*corev1.Pod) {
	e.t.Helper()
	list, err := e.cl.Clientset.CoreV1().Pods(ns).List(e.t.Context(), metav1.ListOptions{})
	require.NoError(e.t, err)
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != rs.UID || !selectorMatches(p) {
			continue
		}
		switch {
		case podrank.IsActive(p):
			active = append(active, p)
		case podrank.IsTerminating(p):
			terminating = append(terminating, p)
		}
	}
	return active, terminating
}

// awaitConverged waits until the API server shows exactly n ready pods of
// rs, none terminating, and a status that says so for the latest generation.
func (e *env) awaitConverged(rs *appsv1.ReplicaSet, n int32) *appsv1.ReplicaSet {
	e.t.Helper()
	var last string
	ok := pollUntil(e.t, 30*time.Second, func() bool {
		cur, err := e.cl.Clientset.AppsV1().ReplicaSets(ns).Get(e.t.Context(), rs.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		active, terminating := e.owned(rs)
		ready := 0
		for _, p := range active {
			if isReady(p) {
				ready++
			}
		}
		st := cur.Status
		last = fmt.Sprintf("active %d ready %d terminating %d, status %+v gen %d", len(active), ready, len(terminating), st, cur.Generation)
		return len(active) == int(n) && ready == int(n) && len(terminating) == 0 &&
			st.Replicas == n && st.ReadyReplicas == n && st.AvailableReplicas == n &&
			st.TerminatingReplicas != nil && *st.TerminatingReplicas == 0 &&
			st.ObservedGeneration == cur.Generation
	})
	require.Truef(e.t, ok, "not converged to %d: %s; expectations %v", n, last, e.snapshot(rs))
	cur, err := e.cl.Clientset.AppsV1().ReplicaSets(ns).Get(e.t.Context(), rs.Name, metav1.GetOptions{})
	require.NoError(e.t, err)
	return cur
}

func (e *env) snapshot(rs *appsv1.ReplicaSet) string {
	s, _ := e.ctrl.Tracker().Snapshot(ns + "/" + rs.Name)
	return s.String()
}

func (e *env) eventCount(reason string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.events[reason]
}

// maxActiveSeen is the largest number of active pods any sync counted.
func (e *env) maxActiveSeen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := 0
	for _, r := range e.reports {
		m = max(m, len(r.Sync.Active))
	}
	return m
}

// pollUntil calls cond every few milliseconds until it holds or the limit
// passes. The limit only bounds a hung test; it is not a speed assertion.
func pollUntil(t *testing.T, limit time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func selectorMatches(p *corev1.Pod) bool {
	return labels.SelectorFromSet(appLabels).Matches(labels.Set(p.Labels))
}
