package conformance

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// base is the fixed "now" most generated inputs are measured from.
var base = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// instantGen draws the corners of time the rules care about, relative to
// now: the zero time, now itself, a nanosecond either side, the edges of
// the log2 buckets (2^k ns ago, ±1ns), the minReadySeconds boundary
// (±1ns), ordinary past and future times.
func instantGen(now time.Time, minReady int32) *rapid.Generator[time.Time] {
	return rapid.Custom(func(t *rapid.T) time.Time {
		switch rapid.IntRange(0, 7).Draw(t, "timeKind") {
		case 0:
			return time.Time{}
		case 1:
			return now.Add(time.Duration(rapid.IntRange(-1, 1).Draw(t, "nowNudge")))
		case 2:
			k := rapid.IntRange(0, 52).Draw(t, "log2")
			return now.Add(-time.Duration(int64(1)<<k) + time.Duration(rapid.IntRange(-1, 1).Draw(t, "edgeNudge")))
		case 3:
			return now.Add(-time.Duration(minReady)*time.Second + time.Duration(rapid.IntRange(-1, 1).Draw(t, "minReadyNudge")))
		case 4:
			return now.Add(time.Duration(rapid.Int64Range(1, int64(48*time.Hour)).Draw(t, "future")))
		case 5:
			return now.Add(-time.Duration(rapid.IntRange(0, 3600).Draw(t, "secondsAgo")) * time.Second)
		default:
			return now.Add(-time.Duration(rapid.Int64Range(0, int64(90*24*time.Hour)).Draw(t, "ago")))
		}
	})
}

// timePool draws a few instants that the pods of one case share, so that
// equal timestamps (ties) are common.
func timePool(t *rapid.T, now time.Time, minReady int32) []time.Time {
	return rapid.SliceOfN(instantGen(now, minReady), 1, 5).Draw(t, "timePool")
}

var costValues = []string{
	"0", "-0", "1", "-1", "5", "007", "-007", "+5", "", " 1", "1e3", "abc",
	"2147483647", "2147483648", "-2147483648", "-2147483649",
	"99999999999999999999", "0x10", "1 ", "--1",
}

var phases = []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodUnknown,
	corev1.PodSucceeded, corev1.PodFailed, "Garbage"}

// podSpec says which parts of a pod the generator varies.
type podSpec struct {
	now      time.Time
	minReady int32
	pool     []time.Time
	ownerUID types.UID // the UID a controller ref most often points at
}

func (s podSpec) instant(t *rapid.T, label string) time.Time {
	if rapid.IntRange(0, 3).Draw(t, label+"Fresh") == 0 {
		return instantGen(s.now, s.minReady).Draw(t, label)
	}
	return rapid.SampledFrom(s.pool).Draw(t, label)
}

// podGen draws one pod named name with ties and corners on every field the
// rules read.
func podGen(s podSpec, name string) *rapid.Generator[*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns",
			Name:      name,
			UID:       types.UID(rapid.SampledFrom([]string{"", "a", "b", "c", "uid-" + name}).Draw(t, "uid")),
		}}
		p.Spec.NodeName = rapid.SampledFrom([]string{"", "n1", "n2", "n3"}).Draw(t, "node")
		p.Status.Phase = rapid.SampledFrom(phases).Draw(t, "phase")
		p.CreationTimestamp = metav1.NewTime(s.instant(t, "created"))
		if rapid.IntRange(0, 5).Draw(t, "deleting") == 0 {
			p.DeletionTimestamp = &metav1.Time{Time: s.instant(t, "deleted")}
		}
		nConds := rapid.IntRange(0, 3).Draw(t, "conditions")
		for i := 0; i < nConds; i++ {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
				Type:               rapid.SampledFrom([]corev1.PodConditionType{corev1.PodReady, corev1.PodReady, corev1.PodScheduled, corev1.ContainersReady}).Draw(t, "condType"),
				Status:             rapid.SampledFrom([]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}).Draw(t, "condStatus"),
				LastTransitionTime: metav1.NewTime(s.instant(t, "ltt")),
			})
		}
		switch rapid.IntRange(0, 3).Draw(t, "costKind") {
		case 0:
		case 1:
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": rapid.SampledFrom(costValues).Draw(t, "cost")}
		case 2:
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": strconv.Itoa(rapid.IntRange(-3, 3).Draw(t, "smallCost"))}
		default:
			p.Annotations = map[string]string{"other": "x"}
		}
		restarts := rapid.SampledFrom([]int32{0, 0, 1, 2, 7})
		for i, n := 0, rapid.IntRange(0, 2).Draw(t, "containers"); i < n; i++ {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
				corev1.ContainerStatus{Name: fmt.Sprintf("c%d", i), RestartCount: restarts.Draw(t, "restarts")})
		}
		always := corev1.ContainerRestartPolicyAlways
		for i, n := 0, rapid.IntRange(0, 2).Draw(t, "initContainers"); i < n; i++ {
			c := corev1.Container{Name: fmt.Sprintf("i%d", i)}
			if rapid.Bool().Draw(t, "sidecar") {
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
		for i, n := 0, rapid.IntRange(0, 2).Draw(t, "initStatuses"); i < n; i++ {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses,
				corev1.ContainerStatus{Name: fmt.Sprintf("i%d", rapid.IntRange(0, 2).Draw(t, "initName")), RestartCount: restarts.Draw(t, "initRestarts")})
		}
		p.Labels = rapid.SampledFrom([]map[string]string{nil, {}, {"app": "web"}, {"app": "web", "tier": "x"}, {"app": "db"}}).Draw(t, "labels")
		for i, n := 0, rapid.IntRange(0, 2).Draw(t, "ownerRefs"); i < n; i++ {
			ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs",
				UID: rapid.SampledFrom([]types.UID{s.ownerUID, s.ownerUID, "other"}).Draw(t, "ownerUID")}
			switch rapid.IntRange(0, 2).Draw(t, "controllerFlag") {
			case 0:
				ref.Controller = ptrTo(true)
			case 1:
				ref.Controller = ptrTo(false)
			}
			p.OwnerReferences = append(p.OwnerReferences, ref)
		}
		return p
	})
}

// podsGen draws up to max pods with distinct names p0, p1, ….
func podsGen(s podSpec, min, max int) *rapid.Generator[[]*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) []*corev1.Pod {
		n := rapid.IntRange(min, max).Draw(t, "n")
		pods := make([]*corev1.Pod, n)
		for i := range pods {
			pods[i] = podGen(s, fmt.Sprintf("p%d", i)).Draw(t, "pod")
		}
		return pods
	})
}

func newSpec(t *rapid.T) podSpec {
	minReady := rapid.SampledFrom([]int32{0, 0, 1, 10, 30, 600, -5}).Draw(t, "minReady")
	now := base
	if rapid.IntRange(0, 9).Draw(t, "zeroNow") == 0 {
		now = time.Time{}
	}
	s := podSpec{now: now, minReady: minReady, ownerUID: "rs-uid"}
	s.pool = timePool(t, base, minReady)
	return s
}

func ptrTo[T any](v T) *T { return &v }
