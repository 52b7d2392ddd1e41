package podrank_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/podrank"
)

// benchNow is the Now of the generated cluster.
var benchNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// genPods builds a realistic scale-down input, deterministically: n active
// Running pods spread over n/30 nodes, ~90% ready with ready times over the
// last 30 days (second resolution, as the API stores them), ~10% with a
// deletion cost, a fifth with some restarts, a tenth with a native sidecar
// and an ordinary init container, the conditions, labels and annotations a
// real pod has; related is pods plus 10% siblings on the same nodes.
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
			p.Annotations[podrank.DeletionCostAnnotation] = strconv.Itoa(r.IntN(201) - 100)
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

// benchKs is {1, 10, 100, 500, n/2} without values from n up and without
// repeats.
func benchKs(n int) []int {
	var ks []int
	for _, k := range []int{1, 10, 100, 500, n / 2} {
		if k < n && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

var benchSink []*corev1.Pod

// BenchmarkForDeletion measures ForDeletion ("podrank") and one pass reading
// every field the order can need from every pod ("keys": the related-pod
// count plus every pod's full key). The side-by-side comparison with the
// real upstream getPodsToDelete lives in the conformance module
// (test/conformance, make bench-upstream).
//
// n=10000/allready repeats k=500 on a cluster where every pod is ready,
// so that the deletion cost and rank of every pod must be read.
func BenchmarkForDeletion(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			pods, related := genPods(n)
			b.Run("keys", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					podrank.BuildKeys(pods, related, podrank.Options{Now: benchNow})
				}
			})
			for _, k := range benchKs(n) {
				benchPair(b, fmt.Sprintf("k=%d", k), pods, related, k)
			}
			if n == 10_000 {
				pods, related := genPodsReady(n, 0)
				benchPair(b, "allready/k=500", pods, related, 500)
			}
		})
	}
}

// benchPair runs ForDeletion on one input.
func benchPair(b *testing.B, name string, pods, related []*corev1.Pod, k int) {
	b.Run(name+"/podrank", func(b *testing.B) {
		b.ReportAllocs()
		opts := podrank.Options{Now: benchNow}
		for b.Loop() {
			benchSink = podrank.ForDeletion(pods, related, k, opts)
		}
	})
}
