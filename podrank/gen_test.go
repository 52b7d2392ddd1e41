package podrank_test

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// Generators for the rapid properties. Every field is drawn from a small
// pool so that ties, equal instants, equal buckets and equal UID prefixes
// are common: those are where the comparator has its traps.

var (
	t0 = podtest.Epoch
	// now is the Now most cases use: two hours after t0.
	now = t0.Add(2 * time.Hour)
	// wallNow carries a monotonic clock reading (fixed for the run, so
	// rapid can replay its draws).
	wallNow = time.Now()
)

// timePool mixes zero, equal, nearby, same-bucket, future, bucket-edge,
// monotonic and absurd instants.
var timePool = []time.Time{
	{},
	time.Time{}.In(time.FixedZone("z", 3600)), // still the zero instant
	t0,
	t0.In(time.FixedZone("x", -7200)), // the same instant elsewhere
	t0.Add(1),
	t0.Add(time.Second),
	t0.Add(30 * time.Minute),
	t0.Add(time.Hour),
	t0.Add(-time.Hour),
	now,
	now.Add(time.Hour),
	now.Add(-(1 << 41)),
	now.Add(-(1<<41 - 1)),
	now.Add(-(1<<41 + 1)),
	wallNow,
	wallNow.Add(time.Second),
	wallNow.Round(0),
	wallNow.Add(-time.Hour),
	time.Unix(1<<40, 0),
	time.Unix(-1<<40, 0),
	time.Unix(math.MaxInt64, 0),
}

var nowPool = []time.Time{{}, now, t0, wallNow, wallNow.Round(0), time.Unix(1<<40, 0)}

var (
	uidPool  = []string{"", "a", "b", "c", "abcdefgh", "abcdefgh\x00", "abcdefgh-1", "abcdefgh-2", "abcdefgi"}
	costPool = []string{"0", "1", "-1", "5", "007", "-007", "+5", "", " 1", "1e3", "-0", "2147483647", "2147483648", "-2147483648", "-2147483649", "x"}
	phases   = []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodUnknown, corev1.PodSucceeded, corev1.PodFailed, "Bogus"}
	statuses = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}
	condType = []corev1.PodConditionType{corev1.PodReady, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled}
	// "Never" is spelled out: its constant is newer than the k8s.io/api floor (v0.33).
	policies = []*corev1.ContainerRestartPolicy{nil, ptr(corev1.ContainerRestartPolicyAlways), ptr(corev1.ContainerRestartPolicyAlways), ptr(corev1.ContainerRestartPolicy("Never"))}
	rankPool = []int{0, 0, 1, 2, 3, 1 << 28, 1<<28 - 1, math.MaxInt >> 1, -1, math.MaxInt, math.MinInt}
)

func ptr[T any](v T) *T { return &v }

func timeGen() *rapid.Generator[time.Time] { return rapid.SampledFrom(timePool) }

// podGen draws an arbitrary pod for the comparator.
func podGen() *rapid.Generator[*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:              "p",
				UID:               types.UID(rapid.SampledFrom(uidPool).Draw(t, "uid")),
				CreationTimestamp: metav1.NewTime(timeGen().Draw(t, "created")),
			},
			Spec:   corev1.PodSpec{NodeName: rapid.SampledFrom([]string{"", "n1", "n2"}).Draw(t, "node")},
			Status: corev1.PodStatus{Phase: rapid.SampledFrom(phases).Draw(t, "phase")},
		}
		for i := range rapid.IntRange(0, 3).Draw(t, "conditions") {
			_ = i
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
				Type:               rapid.SampledFrom(condType).Draw(t, "type"),
				Status:             rapid.SampledFrom(statuses).Draw(t, "status"),
				LastTransitionTime: metav1.NewTime(timeGen().Draw(t, "ltt")),
			})
		}
		if rapid.Bool().Draw(t, "annotated") {
			p.Annotations = map[string]string{"other": "x"}
			if rapid.Bool().Draw(t, "cost") {
				p.Annotations[podrank.DeletionCostAnnotation] = rapid.SampledFrom(costPool).Draw(t, "costValue")
			}
		}
		for range rapid.IntRange(0, 2).Draw(t, "containers") {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
				corev1.ContainerStatus{Name: "c", RestartCount: rapid.Int32Range(-1, 3).Draw(t, "restarts")})
		}
		names := []string{"s1", "s2", "i1"}
		for range rapid.IntRange(0, 2).Draw(t, "initContainers") {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{
				Name:          rapid.SampledFrom(names).Draw(t, "initName"),
				RestartPolicy: rapid.SampledFrom(policies).Draw(t, "policy"),
			})
		}
		for range rapid.IntRange(0, 2).Draw(t, "initStatuses") {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{
				Name:         rapid.SampledFrom(names).Draw(t, "initStatusName"),
				RestartCount: rapid.Int32Range(0, 3).Draw(t, "initRestarts"),
			})
		}
		if rapid.IntRange(0, 9).Draw(t, "deleting") == 0 {
			d := metav1.NewTime(t0)
			p.DeletionTimestamp = &d
		}
		return p
	})
}

func optsGen() *rapid.Generator[podrank.Options] {
	return rapid.Custom(func(t *rapid.T) podrank.Options {
		return podrank.Options{
			Now:                         rapid.SampledFrom(nowPool).Draw(t, "now"),
			DisableDeletionCost:         rapid.IntRange(0, 3).Draw(t, "noCost") == 0,
			DisableLogarithmicScaleDown: rapid.IntRange(0, 3).Draw(t, "noLog") == 0,
		}
	})
}

func rankGen() *rapid.Generator[int] { return rapid.SampledFrom(rankPool) }

// sign maps a comparison result to −1, 0 or 1.
func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// upstreamSign is Compare's answer as upstream's Less gives it both ways.
func upstreamSign(a, b podrank.Ranked, opts podrank.Options) int {
	costOn, logOn := !opts.DisableDeletionCost, !opts.DisableLogarithmicScaleDown
	ab := upstreamLess(a.Pod, b.Pod, a.Rank, b.Rank, opts.Now, costOn, logOn)
	ba := upstreamLess(b.Pod, a.Pod, b.Rank, a.Rank, opts.Now, costOn, logOn)
	switch {
	case ab && ba:
		return 2 // impossible for a consistent Less; fails every check
	case ab:
		return -1
	case ba:
		return 1
	}
	return 0
}

// nilOr draws nil one time in five.
func nilOr(g *rapid.Generator[*corev1.Pod]) *rapid.Generator[*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) *corev1.Pod {
		if rapid.IntRange(0, 4).Draw(t, "isNil") == 0 {
			return nil
		}
		return g.Draw(t, "pod")
	})
}
