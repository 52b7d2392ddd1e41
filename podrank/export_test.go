package podrank

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BuildKeys is one pass reading every field the order can need from every
// pod: count the related pods per node and build every pod's key. It is
// the "keys" reference of BenchmarkForDeletion.
func BuildKeys(pods, related []*corev1.Pod, opts Options) int {
	o := newOrder(opts)
	counts := countByNode(related)
	n := 0
	for _, p := range pods {
		if p != nil {
			k := o.key(p, counts[p.Spec.NodeName])
			o.tail(&k)
			n += int(k.phase)
		}
	}
	return n
}

// CompareBatch compares pods[i] and pods[j] through keys built in one batch
// as ForDeletion builds them, with the given ranks.
func CompareBatch(pods []*corev1.Pod, ranks []int, opts Options, i, j int) int {
	o := newOrder(opts)
	keys := make([]key, len(pods))
	for x, p := range pods {
		keys[x] = o.key(p, ranks[x])
	}
	return o.compare(&keys[i], &keys[j])
}

// LogBucket is R-6.10's bucket of t at now.
func LogBucket(now, t time.Time) int { return int(logBucket(now, t)) }
