package podrank

import (
	corev1 "k8s.io/api/core/v1"
)

// Pointers returns a slice whose i-th element is &pods[i], for the
// []corev1.Pod a list returns (PodList.Items, a controller-runtime
// client.List): every function of this package takes []*corev1.Pod.
//
// Nothing is copied but the pointers: the result aliases pods' elements, so
// it must not outlive a reuse of pods' backing array, and a change made
// through either is seen by both. No function of this package modifies a
// pod, so ranking the result leaves the list as it was. It returns nil when
// pods is empty. Safe for concurrent use on a slice no one modifies.
func Pointers(pods []corev1.Pod) []*corev1.Pod {
	if len(pods) == 0 {
		return nil
	}
	out := make([]*corev1.Pod, len(pods))
	for i := range pods {
		out[i] = &pods[i]
	}
	return out
}
