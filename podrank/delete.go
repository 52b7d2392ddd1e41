package podrank

import (
	"math/bits"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ForDeletion returns the n pods of pods to delete first, in deletion
// order: those upstream's getPodsToDelete would return, ranked by
// [Compare] with the ranks of [RanksByNode](pods, related). n ≤ 0 gives an
// empty slice; n ≥ the number of non-nil pods gives those pods in input
// order, unranked, as upstream; nil pods are skipped. Pods tied under
// Compare may come in any order, and either side of a tie at the n-th
// place may be chosen, as with upstream's unstable sort.
//
// Unlike upstream, pods is never reordered or modified and the result
// never aliases it; time is Options.Now, not the wall clock. It costs about
// one comparison per pod. It is safe for concurrent use while nobody
// modifies the pods. Details: docs/design/deletion-choice.md.
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
	o := newOrder(opts)
	return o.first(pods, live, countByNode(related), n)
}

// first returns the n pods to delete first of the live (n < live)
// non-nil pods of pods, in deletion order.
//
// It keeps the best pods seen so far in a buffer of 2n keys. When the
// buffer is full, it is cut to its n first; the last of those is then the
// bar a later pod must beat to enter. Most pods fail that one comparison,
// many on the first steps alone, before their cost and rank are looked
// up. At the end the n first are selected once more, and sorted.
func (o *order) first(pods []*corev1.Pod, live int, counts map[string]int, n int) []*corev1.Pod {
	keys := make([]key, min(2*n, live))
	// buf holds indices into keys, so that selecting and sorting move
	// 4-byte indices and keys stay put: buf[:used] are the kept keys and
	// buf[used:] the free slots.
	buf := make([]int32, len(keys))
	for i := range buf {
		buf[i] = int32(i)
	}
	cmpAt := func(x, y int32) int { return o.compare(&keys[x], &keys[y]) }
	used := 0
	var bar *key
	for _, p := range pods {
		if p == nil {
			continue
		}
		k := head(p)
		if bar != nil && headAfter(&k, bar) {
			continue
		}
		o.fill(&k, counts[p.Spec.NodeName])
		if bar != nil && o.compare(&k, bar) >= 0 {
			continue
		}
		if used == len(buf) {
			selectAt(buf, n-1, cmpAt)
			used, bar = n, &keys[buf[n-1]]
			if o.compare(&k, bar) >= 0 {
				continue
			}
		}
		keys[buf[used]] = k
		used++
	}
	selectAt(buf[:used], n-1, cmpAt)
	slices.SortFunc(buf[:n], cmpAt)
	out := make([]*corev1.Pod, n)
	for i, x := range buf[:n] {
		out[i] = keys[x].pod
	}
	return out
}

// selectAt reorders a so that a[i] is the element that sorts there: no
// element of a[:i] goes after it and none of a[i+1:] before it. (Where
// cmp is not a strict weak order, a is still only permuted.) It is a
// quickselect with three-way partitioning, so that runs of ties cost
// nothing extra; should the pivots keep being poor, it sorts what is left
// instead, so it never takes more than O(len(a)·log len(a)) comparisons.
func selectAt(a []int32, i int, cmp func(x, y int32) int) {
	lo, hi := 0, len(a)
	for rounds := 2 * bits.Len(uint(len(a))); hi-lo > 1; rounds-- {
		if rounds == 0 {
			slices.SortFunc(a[lo:hi], cmp)
			return
		}
		pivot := a[lo+(hi-lo)/2]
		// Partition a[lo:hi] into [lo, lt) before the pivot, [lt, gt)
		// tied with it and [gt, hi) after it. The pivot ties with itself,
		// so lt < gt and the range shrinks.
		lt, j, gt := lo, lo, hi
		for j < gt {
			switch c := cmp(a[j], pivot); {
			case c < 0:
				a[lt], a[j] = a[j], a[lt]
				lt++
				j++
			case c > 0:
				gt--
				a[j], a[gt] = a[gt], a[j]
			default:
				j++
			}
		}
		switch {
		case i < lt:
			hi = lt
		case i >= gt:
			lo = gt
		default:
			return
		}
	}
}
