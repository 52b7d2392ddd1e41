package conformance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/replicaset"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/slowstart"
	"github.com/reconcilekit/reconcilekit/status"
)

// Side-by-side benchmarks: every BenchmarkVs case runs the same input
// through reconcilekit (impl=reconcilekit) and through the real v1.37.2 code
// (impl=upstream). `make bench-upstream` runs them several times and prints
// one table of medians (cmd/benchtable).

// benchNow is the Now of the generated cluster.
var benchNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// genPods builds a realistic scale-down input, deterministically: n active
// Running pods spread over n/30 nodes, ~90% ready with ready times over the
// last 30 days (second resolution, as the API stores them), ~10% with a
// deletion cost, a fifth with some restarts, a tenth with a native sidecar
// and an ordinary init container, the conditions, labels and annotations a
// real pod has; related is pods plus 10% siblings on the same nodes.
// Both ForDeletion and the upstream baseline run on its output.
func genPods(n int) (pods, related []*corev1.Pod) { return genPodsReady(n, 10) }

// genPodsReady is genPods with one pod in notReadyOneIn not ready (never
// when it is 0).
func genPodsReady(n, notReadyOneIn int) (pods, related []*corev1.Pod) {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	nodes := max(1, n/30)
	always := corev1.ContainerRestartPolicyAlways
	mk := func(i int) *corev1.Pod {
		readyAt := benchNow.Add(-time.Duration(r.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Second)
		created := readyAt.Add(-time.Duration(r.Int64N(int64(10 * time.Minute)))).Truncate(time.Second)
		ready := corev1.ConditionTrue
		if notReadyOneIn > 0 && r.IntN(notReadyOneIn) == 0 {
			ready = corev1.ConditionFalse
		}
		cond := func(t corev1.PodConditionType, s corev1.ConditionStatus, at time.Time) corev1.PodCondition {
			return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.NewTime(at)}
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:         "default",
				Name:              fmt.Sprintf("web-7d9f8b6c4-%06d", i),
				UID:               types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)),
				CreationTimestamp: metav1.NewTime(created),
				Labels:            map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c4"},
				Annotations:       map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-10-01T00:00:00Z"},
			},
			Spec: corev1.PodSpec{
				NodeName:   fmt.Sprintf("node-%05d", r.IntN(nodes)),
				Containers: []corev1.Container{{Name: "web"}, {Name: "metrics"}},
			},
			Status: corev1.PodStatus{
				Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{
					cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue, created),
					cond(corev1.PodInitialized, corev1.ConditionTrue, created),
					cond(corev1.PodReady, ready, readyAt),
					cond(corev1.ContainersReady, ready, readyAt),
					cond(corev1.PodScheduled, corev1.ConditionTrue, created),
				},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web"}, {Name: "metrics"}},
			},
		}
		if r.IntN(10) == 0 {
			p.Annotations["controller.kubernetes.io/pod-deletion-cost"] = strconv.Itoa(r.IntN(201) - 100)
		}
		if r.IntN(5) == 0 {
			p.Status.ContainerStatuses[r.IntN(2)].RestartCount = 1 + r.Int32N(5)
		}
		if r.IntN(10) == 0 {
			p.Spec.InitContainers = []corev1.Container{{Name: "init-db"}, {Name: "proxy", RestartPolicy: &always}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init-db"}, {Name: "proxy", RestartCount: r.Int32N(3)}}
		}
		return p
	}
	pods = make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = mk(i)
	}
	related = append(make([]*corev1.Pod, 0, n+n/10), pods...)
	for i := range n / 10 {
		related = append(related, mk(n+i))
	}
	return pods, related
}

var sinkPods []*corev1.Pod

// vs runs one case for both implementations.
func vs(b *testing.B, name string, ours, upstream func()) {
	b.Run(name+"/impl=reconcilekit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ours()
		}
	})
	b.Run(name+"/impl=upstream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			upstream()
		}
	})
}

// BenchmarkVsForDeletion: podrank.ForDeletion against getPodsToDelete at
// k = 1, 10, 100, 500 and n/2 victims (those below n). getPodsToDelete
// sorts its input in place, so each upstream iteration first copies the
// slice of n pointers (slices.Clone; small next to the sort).
func BenchmarkVsForDeletion(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		pods, related := genPods(n)
		var done []int
		for _, k := range []int{1, 10, 100, 500, n / 2} {
			if k >= n || slices.Contains(done, k) { // at n=1000, 500 is n/2
				continue
			}
			done = append(done, k)
			name := fmt.Sprintf("n=%d/k=%d", n, k)
			vs(b, name, func() {
				sinkPods = podrank.ForDeletion(pods, related, k, podrank.Options{Now: benchNow})
			}, func() {
				sinkPods = upstreamGetPodsToDelete(slices.Clone(pods), related, k)
			})
		}
	}
}

var sinkStatus appsv1.ReplicaSetStatus

// BenchmarkVsCalculate: status.Calculate against calculateStatus over n
// active pods of a ReplicaSet with minReadySeconds 30.
func BenchmarkVsCalculate(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		pods, _ := genPods(n)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
		rs.Spec.Replicas = ptrTo(int32(n))
		rs.Spec.MinReadySeconds = 30
		rs.Spec.Template.Labels = map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c4"}
		features := replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: true}
		vs(b, "n="+strconv.Itoa(n), func() {
			sinkStatus = status.Calculate(rs, pods, nil, nil, benchNow, status.Options{})
		}, func() {
			sinkStatus = upstreamCalculateStatus(rs, pods, nil, nil, features, benchNow)
		})
	}
}

// BenchmarkVsExpectationsCycle: one key's full round of 10 pods — expect,
// observe each, check satisfied — on an expectations.Tracker and on
// UIDTrackingControllerExpectations as kube-controller-manager builds it.
func BenchmarkVsExpectationsCycle(b *testing.B) {
	const key, n = "default/web", 10
	podKeys := make([]string, n)
	for i := range podKeys {
		podKeys[i] = fmt.Sprintf("default/web-%05d", i)
	}
	tr := expectations.New(expectations.Options{})
	up := controller.NewUIDTrackingControllerExpectations(controller.NewControllerExpectations())
	log := logr.Discard()
	vs(b, "creations", func() {
		tr.ExpectCreations(key, n)
		for range n {
			tr.CreationObserved(key)
		}
		if !tr.Satisfied(key) {
			b.Fatal("not satisfied")
		}
	}, func() {
		_ = up.ExpectCreations(log, key, n)
		for range n {
			up.CreationObserved(log, key)
		}
		if !up.SatisfiedExpectations(log, key) {
			b.Fatal("not satisfied")
		}
	})
	vs(b, "deletions", func() {
		tr.ExpectDeletions(key, podKeys)
		for _, pk := range podKeys {
			tr.DeletionObserved(key, pk)
		}
		if !tr.Satisfied(key) {
			b.Fatal("not satisfied")
		}
	}, func() {
		_ = up.ExpectDeletions(log, key, podKeys)
		for _, pk := range podKeys {
			up.DeletionObserved(log, key, pk)
		}
		if !up.SatisfiedExpectations(log, key) {
			b.Fatal("not satisfied")
		}
	})
}

// BenchmarkVsSlowStart: the overhead of the batching itself, 500 calls of a
// function that does nothing (1, 2, 4, …, 245), slowstart.Run against
// slowStartBatch.
func BenchmarkVsSlowStart(b *testing.B) {
	ctx := context.Background()
	vs(b, "count=500", func() {
		_, _ = slowstart.Run(ctx, 500, slowstart.Options{}, func(context.Context, int) error { return nil })
	}, func() {
		_, _ = upstreamSlowStartBatch(500, 1, func() error { return nil })
	})
}

// BenchmarkVsExpectationsParallel: informer handlers and workers on both
// cores at once, each iteration observing a creation for one of 100 keys
// and asking whether it is satisfied; every key has pending expectations
// that never become fulfilled, so Satisfied also checks the expiry. It
// replaces the root module's comparison with a hand-written model.
func BenchmarkVsExpectationsParallel(b *testing.B) {
	const nkeys = 100
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/rs-%d", i%37, i)
	}
	log := logr.Discard()
	run := func(b *testing.B, observe func(string), satisfied func(string) bool) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(nkeys)
			for pb.Next() {
				observe(keys[i])
				_ = satisfied(keys[i])
				if i++; i == nkeys {
					i = 0
				}
			}
		})
	}
	b.Run("keys=100/impl=reconcilekit", func(b *testing.B) {
		tr := expectations.New(expectations.Options{})
		for _, k := range keys {
			tr.ExpectCreations(k, math.MaxInt/2)
		}
		run(b, tr.CreationObserved, tr.Satisfied)
	})
	b.Run("keys=100/impl=upstream", func(b *testing.B) {
		up := controller.NewUIDTrackingControllerExpectations(controller.NewControllerExpectations())
		for _, k := range keys {
			_ = up.ExpectCreations(log, k, math.MaxInt/2)
		}
		run(b, func(k string) { up.CreationObserved(log, k) }, func(k string) bool { return up.SatisfiedExpectations(log, k) })
	})
}
