package podutil

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ReadyCondition returns the first condition of type Ready, or nil.
// The result points into p; callers must not modify it.
func ReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	if p == nil {
		return nil
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the first Ready condition of p has status True
// later duplicate Ready conditions are ignored.
func IsReady(p *corev1.Pod) bool {
	c := ReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// ReadyTime returns the last transition time of p's Ready condition when p is
// ready, and the zero time otherwise. A ready pod whose condition has
// no transition time also yields the zero time.
func ReadyTime(p *corev1.Pod) time.Time {
	c := ReadyCondition(p)
	if c == nil || c.Status != corev1.ConditionTrue {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// IsAvailable reports whether p is ready and has been for at least
// minReadySeconds at now. With minReadySeconds == 0 a ready pod is
// available even without a transition time; otherwise the transition time
// must be set and LTT+minReadySeconds must lie at or before now: the exact
// instant counts as available, as in v1.37's IsPodAvailable (older releases
// and kubectl's copy say strictly before). A negative minReadySeconds is
// compared arithmetically, as upstream does.
func IsAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := ReadyCondition(p)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	return AvailableAt(c.LastTransitionTime.Time, minReadySeconds, now)
}

// AvailableAt applies the time half of to a ready pod whose Ready
// condition last transitioned at readySince.
func AvailableAt(readySince time.Time, minReadySeconds int32, now time.Time) bool {
	if minReadySeconds == 0 {
		return true
	}
	if readySince.IsZero() {
		return false
	}
	return !readySince.Add(time.Duration(minReadySeconds) * time.Second).After(now)
}

// MaxRestarts returns the highest restart count among p's regular container
// statuses and among the statuses of its native sidecars: init containers
// declared in the spec with restartPolicy Always. Ordinary init
// containers, ephemeral containers and declared containers without a status
// contribute nothing; an absent value counts as 0.
func MaxRestarts(p *corev1.Pod) (regular, sidecar int32) {
	if p == nil {
		return 0, 0
	}
	for i := range p.Status.ContainerStatuses {
		regular = max(regular, p.Status.ContainerStatuses[i].RestartCount)
	}
	for i := range p.Status.InitContainerStatuses {
		s := &p.Status.InitContainerStatuses[i]
		if s.RestartCount > sidecar && IsSidecar(p, s.Name) {
			sidecar = s.RestartCount
		}
	}
	return regular, sidecar
}

// IsSidecar reports whether any init container of p named name restarts
// Always: whether it is a native sidecar.
// It scans linearly: pods declare a handful of init containers, so a set
// would cost an allocation for nothing.
func IsSidecar(p *corev1.Pod, name string) bool {
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if c.Name == name && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return true
		}
	}
	return false
}

// Label is one key/value pair a pod must carry; see [AppendLabels].
type Label struct{ Key, Value string }

// AppendLabels appends the pairs of want to buf and returns the result, for
// [HasLabels]. Preparing the list once per call, instead of ranging over the
// template's map for every pod, is what makes counting thousands of pods
// cheap; with a stack array as buf it does not allocate for up to len(buf)
// labels. The order of the pairs is unspecified.
func AppendLabels(buf []Label, want map[string]string) []Label {
	buf = slices.Grow(buf, len(want))
	for k, v := range want {
		buf = append(buf, Label{k, v})
	}
	return buf
}

// HasLabels reports whether labels contains every key/value of want (R-8.2's
// "fully labeled"). An empty want matches every label set. want is expected
// to hold distinct keys, as [AppendLabels] returns them.
func HasLabels(labels map[string]string, want []Label) bool {
	if len(labels) < len(want) {
		return false // cannot hold len(want) distinct keys
	}
	for _, l := range want {
		if got, ok := labels[l.Key]; !ok || got != l.Value {
			return false
		}
	}
	return true
}
