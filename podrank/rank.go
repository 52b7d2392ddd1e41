package podrank

import (
	corev1 "k8s.io/api/core/v1"
)

// RanksByNode returns, for each pod of pods, the number of active pods
// ([IsActive], R-5.1) in related that have the same spec.nodeName
// the empty node name is a bucket of its own. Readiness plays no
// part, and terminating or terminal related pods do not count. Every entry
// of related is counted, so a pod listed twice counts twice, as upstream.
//
// The result has len(pods) entries; a nil pod gets 0 and nil related pods
// are ignored. Neither slice is modified.
func RanksByNode(pods, related []*corev1.Pod) []int {
	counts := countByNode(related)
	ranks := make([]int, len(pods))
	for i, p := range pods {
		if p != nil {
			ranks[i] = counts[p.Spec.NodeName]
		}
	}
	return ranks
}

// countByNode is R-7.1's count of active related pods per node name.
func countByNode(related []*corev1.Pod) map[string]int {
	counts := make(map[string]int)
	for _, p := range related {
		if IsActive(p) {
			counts[p.Spec.NodeName]++
		}
	}
	return counts
}
