package podrank

import (
	"math/bits"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ForDeletion returns the n pods of pods to delete first: the n pods that
// upstream's getPodsToDelete would return (SPEC ), ranked by [Compare]
// with the ranks of [RanksByNode](pods, related), in deletion order.
//
//   - n ≤ 0 returns an empty slice.
//   - n ≥ the number of non-nil pods returns those pods in input order,
//     without ranking them, as upstream does when every pod goes.
//   - Nil pods are skipped.
//   - Pods that tie under Compare may come in any order, and when ties
//     straddle the n-th place any of them may be chosen, as with upstream's
//     unstable sort. Where Compare is a strict weak order on pods
//     (for instance when no two pods share a ready or creation instant), the
//     result is exactly a prefix of the sorted order; where it is not,
//     upstream's own answer depends on its sort's pivots, and ForDeletion
//     returns n distinct pods chosen by the same comparisons.
//
// Deviations from upstream: pods is never reordered or modified and the
// result never aliases it (upstream sorts the caller's slice in place and
// returns a prefix of it); Options.Now replaces the wall clock; the
// deletion-age metric of, with its division by zero, is not computed.
//
// Cost: each pod is read at most once, and only as far as needed, into a
// compact key; the n first are selected without sorting the others (a
// buffered quickselect that keeps at most 2n keys), and only those n are
// sorted. Memory is O(n) keys plus the result; no comparison allocates.
// BenchmarkForDeletion measures it side by side with an upstream-style
// sort.
//
// ForDeletion is safe for concurrent use as long as nobody modifies the
// pods meanwhile.
func ForDeletion(pods, related []*corev1.Pod, n int, opts Options) []*corev1.Pod {
	if n <= 0 {
		return []*corev1.Pod{}
	}
	live := 0
	for _, p := range pods {
		if p != nil {
			live++
		}
	}
	if n >= live {
		out := make([]*corev1.Pod, 0, live)
		for _, p := range pods {
			if p != nil {
				out = append(out, p)
			}
		}
		return out
	}
	c := newConfig(opts, pods)
	first := c.first(related, live, n)
	out := make([]*corev1.Pod, n)
	for i, x := range first.order {
		out[i] = pods[first.keys[x].pos]
	}
	return out
}

// selection is the result of first: keys[order[i]] is the i-th pod.
type selection struct {
	keys  []key
	order []int32
}

// first selects the n (0 < n < live) first of the live pods of c.pods.
//
// Keys stream into a buffer of 2n. When it is full, it is partitioned so
// that its n first keys stay; the last of those becomes the bar a pod must
// beat to enter. A pod is dropped as soon as the part of its key built so
// far shows that it cannot beat the bar: often right after its node, phase
// and readiness are known, before its cost annotation or its rank are
// looked up. At the end the buffer is partitioned once more and its n
// first keys are sorted. The cost is about one comparison per pod, plus a
// few per pod that enters; the memory is 2n keys.
func (c *config) first(related []*corev1.Pod, live, n int) selection {
	counts := countByNode(related)
	buf := make([]key, 0, min(2*n, live))
	var bar key
	barred := false
	for i, p := range c.pods {
		if p == nil {
			continue
		}
		// Build the key in stages, dropping the pod as soon as what is
		// known shows it goes after the bar. The bits of head that are not
		// set yet are 0, so k.head > bar.head exactly when the steps known
		// so far already put k after the bar.
		var k key
		c.keyHead(&k, i)
		if barred && k.head > bar.head {
			continue
		}
		c.setCost(&k)
		if barred && k.head > bar.head {
			continue
		}
		c.setRank(&k, counts[p.Spec.NodeName])
		if barred && c.compare(&k, &bar) >= 0 {
			continue
		}
		if len(buf) == cap(buf) {
			c.partition(buf, n)
			buf = buf[:n]
			bar, barred = c.last(buf), true
			if c.compare(&k, &bar) >= 0 {
				continue
			}
		}
		buf = append(buf, k)
	}
	c.partition(buf, n)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return c.compare(&buf[x], &buf[y]) })
	return selection{keys: buf, order: order}
}

// last returns the key of keys that goes last.
func (c *config) last(keys []key) key {
	m := 0
	for i := 1; i < len(keys); i++ {
		if c.compare(&keys[i], &keys[m]) > 0 {
			m = i
		}
	}
	return keys[m]
}

// partition reorders a so that no key of a[n:] goes before a key of
// a[:n] (where the order is a strict weak one; otherwise it still
// terminates and keeps every key). It is a quickselect with three-way
// partitioning, so runs of equal keys cost nothing extra, and it falls
// back to sorting if the pivots keep being poor.
//
// It first partitions by head and rank alone, which decide
// most pairs without reading anything more, and compares fully only
// within the run of keys that tie there and straddle n: that spares
// reading the restart counts of pods that tie with a pivot on those steps.
func (c *config) partition(a []key, n int) {
	c.partitionWithin(a, n, 2*bits.Len(uint(len(a))), true)
}

// partitionWithin is partition giving up on quickselect after budget
// rounds, comparing only head and rank if coarse.
func (c *config) partitionWithin(a []key, n, budget int, coarse bool) {
	lo, hi := 0, len(a)
	for ; hi-lo > 16; budget-- {
		if n <= lo || n >= hi {
			return
		}
		if budget == 0 {
			idx := make([]int32, hi-lo)
			for i := range idx {
				idx[i] = int32(lo + i)
			}
			slices.SortFunc(idx, func(x, y int32) int { return c.compare(&a[x], &a[y]) })
			sorted := make([]key, len(idx))
			for i, x := range idx {
				sorted[i] = a[x]
			}
			copy(a[lo:hi], sorted)
			return
		}
		m := c.median(a, lo, lo+(hi-lo)/2, hi-1, coarse)
		if !coarse {
			c.tail(&a[m]) // so the copy carries it
		}
		pivot := a[m]
		// [lo, lt) go before the pivot, [lt, i) tie with it, [gt, hi) go
		// after it. The pivot ties with itself, so lt < gt at the end and
		// the range shrinks.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch r := c.compareAt(&a[i], &pivot, coarse); {
			case r < 0:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case r > 0:
				gt--
				a[i], a[gt] = a[gt], a[i]
			default:
				i++
			}
		}
		switch {
		case n < lt:
			hi = lt
		case n > gt:
			lo = gt
		default:
			if coarse && n > lt && n < gt {
				c.partitionWithin(a[lt:gt], n-lt, 2*bits.Len(uint(gt-lt)), false)
			}
			return
		}
	}
	if n > lo && n < hi { // a short range: insertion sort
		for i := lo + 1; i < hi; i++ {
			for j := i; j > lo && c.compare(&a[j], &a[j-1]) < 0; j-- {
				a[j], a[j-1] = a[j-1], a[j]
			}
		}
	}
}

// median returns whichever of i, j, k holds the middle key.
func (c *config) median(a []key, i, j, k int, coarse bool) int {
	if c.compareAt(&a[j], &a[i], coarse) < 0 {
		i, j = j, i
	}
	if c.compareAt(&a[k], &a[j], coarse) < 0 {
		j = k
		if c.compareAt(&a[j], &a[i], coarse) < 0 {
			j = i
		}
	}
	return j
}

// compareAt is compare, or only its first five steps (head and rank) if
// coarse.
func (c *config) compareAt(a, b *key, coarse bool) int {
	if !coarse {
		return c.compare(a, b)
	}
	switch {
	case a.head < b.head:
		return -1
	case a.head > b.head:
		return 1
	case a.rank > b.rank:
		return -1
	case a.rank < b.rank:
		return 1
	}
	return 0
}
