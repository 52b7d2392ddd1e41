package status_test

import (
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
)

var (
	t0      = podtest.Epoch
	now     = t0.Add(time.Hour)
	errSync = errors.New("pods \"web-x\" is forbidden: exceeded quota")
	web     = map[string]string{"app": "web"}
)

func ptr[T any](v T) *T { return &v }

// replicaSet returns a ReplicaSet wanting replicas pods labelled app=web with
// the given minReadySeconds and status conditions.
func replicaSet(replicas int32, minReady int32, conds ...appsv1.ReplicaSetCondition) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Generation: 3},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr(replicas),
			MinReadySeconds: minReady,
			Template:        corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}},
		},
		Status: appsv1.ReplicaSetStatus{ObservedGeneration: 2, Conditions: conds},
	}
}

func failureCond(reason, msg string, at time.Time) appsv1.ReplicaSetCondition {
	return appsv1.ReplicaSetCondition{
		Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
		Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at),
	}
}

func otherCond(typ string) appsv1.ReplicaSetCondition {
	return appsv1.ReplicaSetCondition{
		Type: appsv1.ReplicaSetConditionType(typ), Status: corev1.ConditionFalse,
		Reason: "Other", LastTransitionTime: metav1.NewTime(t0),
	}
}

// snapshot deep-copies pods so a test can prove they were not modified; it
// keeps nil entries.
func snapshot(pods []*corev1.Pod) []*corev1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

// ---- rapid generators ----

var phases = []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodUnknown, corev1.PodSucceeded, corev1.PodFailed}

// podGen draws an arbitrary pod (or, now and then, nil): any phase, maybe a
// deletion timestamp, no/True/False/duplicate Ready conditions whose
// transition time lies 0–20 s before now (or is zero), and labels drawn from
// a small set so template matching both succeeds and fails.
func podGen() *rapid.Generator[*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) *corev1.Pod {
		if rapid.IntRange(0, 9).Draw(t, "nil") == 0 {
			return nil
		}
		opts := []podtest.Option{podtest.Phase(rapid.SampledFrom(phases).Draw(t, "phase"))}
		if rapid.Bool().Draw(t, "deleting") {
			opts = append(opts, podtest.Deleting(t0))
		}
		since := time.Time{}
		if ago := rapid.IntRange(-1, 20).Draw(t, "readyAgoSeconds"); ago >= 0 {
			since = now.Add(-time.Duration(ago) * time.Second)
		}
		switch rapid.IntRange(0, 3).Draw(t, "ready") {
		case 1:
			opts = append(opts, podtest.Ready(since))
		case 2:
			opts = append(opts, podtest.NotReady())
		case 3:
			opts = append(opts, podtest.NotReady(), podtest.Ready(since))
		}
		labels := map[string]string{}
		for _, k := range []string{"app", "tier"} {
			if v := rapid.SampledFrom([]string{"", "web", "db"}).Draw(t, "label-"+k); v != "" {
				labels[k] = v
			}
		}
		opts = append(opts, podtest.Labels(labels))
		return podtest.New(rapid.StringMatching(`[a-z]{1,6}`).Draw(t, "name"), opts...)
	})
}

func podsGen() *rapid.Generator[[]*corev1.Pod] { return rapid.SliceOfN(podGen(), 0, 25) }

// condsGen draws a ReplicaSet condition list: nil, empty, or a few
// conditions, some of which may be ReplicaFailure when withFailure is set.
func condsGen(withFailure bool) *rapid.Generator[[]appsv1.ReplicaSetCondition] {
	types := []string{"Progressing", "Custom"}
	if withFailure {
		types = append(types, ReplicaFailureType)
	}
	return rapid.Custom(func(t *rapid.T) []appsv1.ReplicaSetCondition {
		switch rapid.IntRange(0, 2).Draw(t, "form") {
		case 0:
			return nil
		case 1:
			return []appsv1.ReplicaSetCondition{}
		}
		n := rapid.IntRange(1, 4).Draw(t, "n")
		out := make([]appsv1.ReplicaSetCondition, n)
		for i := range out {
			typ := rapid.SampledFrom(types).Draw(t, "type")
			if typ == ReplicaFailureType {
				out[i] = failureCond(rapid.SampledFrom([]string{"", "FailedCreate", "FailedDelete"}).Draw(t, "reason"), "old", t0)
			} else {
				out[i] = otherCond(typ)
			}
		}
		return out
	})
}

// ReplicaFailureType is spelled out (not status.ReplicaFailure) so the tests
// pin the string itself.
const ReplicaFailureType = "ReplicaFailure"

// rsGen draws a ReplicaSet with a random desired count (maybe nil), min
// ready seconds, generation/observedGeneration, counts and conditions.
func rsGen(withFailure bool) *rapid.Generator[*appsv1.ReplicaSet] {
	return rapid.Custom(func(t *rapid.T) *appsv1.ReplicaSet {
		rs := replicaSet(int32(rapid.IntRange(0, 30).Draw(t, "replicas")), int32(rapid.IntRange(0, 12).Draw(t, "minReady")))
		if rapid.IntRange(0, 4).Draw(t, "nilReplicas") == 0 {
			rs.Spec.Replicas = nil
		}
		rs.Generation = int64(rapid.IntRange(1, 3).Draw(t, "generation"))
		rs.Status = statusGen(withFailure).Draw(t, "status")
		return rs
	})
}

func statusGen(withFailure bool) *rapid.Generator[appsv1.ReplicaSetStatus] {
	return rapid.Custom(func(t *rapid.T) appsv1.ReplicaSetStatus {
		s := appsv1.ReplicaSetStatus{
			Replicas:             int32(rapid.IntRange(0, 5).Draw(t, "st.replicas")),
			FullyLabeledReplicas: int32(rapid.IntRange(0, 5).Draw(t, "st.labeled")),
			ReadyReplicas:        int32(rapid.IntRange(0, 5).Draw(t, "st.ready")),
			AvailableReplicas:    int32(rapid.IntRange(0, 5).Draw(t, "st.available")),
			ObservedGeneration:   int64(rapid.IntRange(0, 3).Draw(t, "st.observedGeneration")),
			Conditions:           condsGen(withFailure).Draw(t, "st.conditions"),
		}
		if rapid.Bool().Draw(t, "st.hasTerminating") {
			s.TerminatingReplicas = ptr(int32(rapid.IntRange(0, 3).Draw(t, "st.terminating")))
		}
		return s
	})
}
