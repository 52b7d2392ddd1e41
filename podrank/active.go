package podrank

import (
	corev1 "k8s.io/api/core/v1"
)

// IsActive reports whether p is neither terminal (phase Succeeded or Failed)
// nor marked for deletion. Pods with an empty, Pending, Unknown
// or Running phase are active unless they carry a deletion timestamp. A nil
// pod is not active.
func IsActive(p *corev1.Pod) bool {
	return p != nil && !isTerminal(p) && p.DeletionTimestamp == nil
}

// IsTerminating reports whether p carries a deletion timestamp and is not
// terminal. A terminal pod is never terminating, with or without
// a deletion timestamp. A nil pod is not terminating.
func IsTerminating(p *corev1.Pod) bool {
	return p != nil && p.DeletionTimestamp != nil && !isTerminal(p)
}

// isTerminal reports whether p's phase is Succeeded or Failed.
func isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// FilterActive returns the pods of pods for which [IsActive] holds, in input
// order. It returns nil, not an empty slice, when none is
// active. Nil entries are skipped. The result is a new slice; pods is not
// modified.
func FilterActive(pods []*corev1.Pod) []*corev1.Pod { return filter(pods, IsActive) }

// FilterTerminating returns the pods of pods for which [IsTerminating]
// holds, in input order. It returns nil when none is
// terminating. Nil entries are skipped. The result is a new slice; pods is
// not modified.
func FilterTerminating(pods []*corev1.Pod) []*corev1.Pod {
	return filter(pods, IsTerminating)
}

// filter relies on keep rejecting nil pods.
func filter(pods []*corev1.Pod, keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}
