package podrank

import (
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// BuildKeys is one pass reading every field the order can need from every
// pod: count the related pods per node and build every pod's full key,
// restart counts and creation time included. It is the "keys" reference
// of BenchmarkForDeletion.
func BuildKeys(pods, related []*corev1.Pod, opts Options) int {
	c := newConfig(opts, pods)
	keys := c.keys(countByNode(related), len(pods))
	for i := range keys {
		c.tail(&keys[i])
	}
	return len(keys)
}

// CompareBatch compares pods[i] and pods[j] through keys built in one batch
// as ForDeletion builds them, with the given ranks.
func CompareBatch(pods []*corev1.Pod, ranks []int, opts Options, i, j int) int {
	c := newConfig(opts, pods)
	keys := make([]key, len(pods))
	for x := range pods {
		keys[x] = c.key(x, ranks[x])
	}
	return c.compare(&keys[i], &keys[j])
}

// LogBucket is R-6.10's bucket of t at now.
func LogBucket(now, t time.Time) int {
	c := newConfig(Options{Now: now}, nil)
	sec, nsec := instant(t)
	d, ok := c.delta(sec, nsec, hasMono(t))
	if !ok {
		d = now.Sub(t)
	}
	return int(logBucket(d))
}

// KeySize is the size of one key in bytes.
const KeySize = unsafe.Sizeof(key{})

// keys builds the key of every non-nil pod of c.pods (live of them), as a
// selection that keeps every key would.
func (c *config) keys(counts map[string]int, live int) []key {
	keys := make([]key, 0, live)
	for i, p := range c.pods {
		if p != nil {
			keys = append(keys, c.key(i, counts[p.Spec.NodeName]))
		}
	}
	return keys
}
