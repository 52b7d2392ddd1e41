package conformance

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/controller"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/podrank"
)

// upstreamLess is controller.ActivePodsWithRanks.Less on the pair (a, b).
func upstreamLess(a, b *corev1.Pod, ra, rb int, now time.Time) bool {
	s := controller.ActivePodsWithRanks{Pods: []*corev1.Pod{a, b}, Rank: []int{ra, rb}, Now: metav1.Time{Time: now}}
	return s.Less(0, 1)
}

// TestCompareMatchesActivePodsWithRanksLess: podrank.Compare(a, b) < 0
// exactly when upstream's Less(a, b), > 0 exactly when Less(b, a), for every
// pair of a random set of pods with random ranks and Now (zero Now included:
// no log buckets, as upstream with a zero Now).
func TestCompareMatchesActivePodsWithRanksLess(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			pods := podsGen(s, 1, 8).Draw(t, "pods")
			ranks := rapid.SliceOfN(rapid.SampledFrom([]int{0, 0, 1, 2, 3}), len(pods), len(pods)).Draw(t, "ranks")
			opts := podrank.Options{Now: s.now}
			for i := range pods {
				for j := range pods {
					got := podrank.Compare(podrank.Ranked{Pod: pods[i], Rank: ranks[i]}, podrank.Ranked{Pod: pods[j], Rank: ranks[j]}, opts)
					lt := upstreamLess(pods[i], pods[j], ranks[i], ranks[j], s.now)
					gt := upstreamLess(pods[j], pods[i], ranks[j], ranks[i], s.now)
					addCases(1)
					if (got < 0) != lt || (got > 0) != (gt && !lt) {
						t.Fatalf("Compare(%s, %s) = %d, upstream Less = %v, reverse Less = %v\n%s\n%s",
							pods[i].Name, pods[j].Name, got, lt, gt, describe(pods[i]), describe(pods[j]))
					}
				}
			}
		})
	})
}

// lessMatrix returns upstream Less for every ordered pair, with ranks as
// getPodsRankedByRelatedPodsOnSameNode computes them.
func lessMatrix(pods []*corev1.Pod, ranks []int, now time.Time) [][]bool {
	s := controller.ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.Time{Time: now}}
	m := make([][]bool, len(pods))
	for i := range pods {
		m[i] = make([]bool, len(pods))
		for j := range pods {
			m[i][j] = s.Less(i, j)
		}
	}
	return m
}

// weakOrderViolation returns why upstream's comparator is not a strict weak
// order on pods, or "" when it is one.
func weakOrderViolation(l [][]bool) string {
	n := len(l)
	eq := func(i, j int) bool { return !l[i][j] && !l[j][i] }
	for i := 0; i < n; i++ {
		if l[i][i] {
			return fmt.Sprintf("irreflexivity: Less(p%d, p%d)", i, i)
		}
		for j := 0; j < n; j++ {
			if l[i][j] && l[j][i] {
				return fmt.Sprintf("asymmetry: Less(p%d, p%d) both ways", i, j)
			}
			for k := 0; k < n; k++ {
				if l[i][j] && l[j][k] && !l[i][k] {
					return fmt.Sprintf("transitivity: p%d<p%d<p%d but not p%d<p%d", i, j, k, i, k)
				}
				if eq(i, j) && eq(j, k) && !eq(i, k) {
					return fmt.Sprintf("transitivity of ties (R-6.14): p%d~p%d~p%d but not p%d~p%d", i, j, k, i, k)
				}
			}
		}
	}
	return ""
}

// validPrefix reports whether chosen (indices into pods) could be the first
// k pods of a sort by the strict weak order l: k distinct pods, and no pod
// left out comes strictly before a chosen one.
func validPrefix(l [][]bool, chosen []int, k int) string {
	if len(chosen) != k {
		return fmt.Sprintf("%d pods chosen, want %d", len(chosen), k)
	}
	in := make([]bool, len(l))
	for _, c := range chosen {
		if c < 0 || in[c] {
			return fmt.Sprintf("pod %d chosen twice or not an input pod", c)
		}
		in[c] = true
	}
	for _, c := range chosen {
		for u := range l {
			if !in[u] && l[u][c] {
				return fmt.Sprintf("p%d was left out but sorts before chosen p%d", u, c)
			}
		}
	}
	return ""
}

func indices(pods, of []*corev1.Pod) []int {
	out := make([]int, len(of))
	for i, p := range of {
		out[i] = slices.Index(pods, p)
	}
	return out
}

// deletionInput draws the input of one deletion choice: pods (the owner's
// active pods as upstream's manageReplicas passes them, any state here),
// related pods (the pods themselves plus others on the same nodes) and k.
func deletionInput(t *rapid.T) (podSpec, []*corev1.Pod, []*corev1.Pod, int) {
	s := newSpec(t)
	pods := podsGen(s, 1, 10).Draw(t, "pods")
	var related []*corev1.Pod
	if rapid.IntRange(0, 3).Draw(t, "bareReplicaSet") > 0 {
		related = append(related, pods...)
		for i, n := 0, rapid.IntRange(0, 4).Draw(t, "siblings"); i < n; i++ {
			related = append(related, podGen(s, fmt.Sprintf("q%d", i)).Draw(t, "sibling"))
		}
	}
	k := rapid.IntRange(1, len(pods)).Draw(t, "k")
	return s, pods, related, k
}

// TestRanksByNodeMatchesUpstream: podrank.RanksByNode equals the ranks of
// getPodsRankedByRelatedPodsOnSameNode.
func TestRanksByNodeMatchesUpstream(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			_, pods, related, _ := deletionInput(t)
			want := upstreamRankedByNode(pods, related).Rank
			got := podrank.RanksByNode(pods, related)
			addCases(1)
			if !slices.Equal(got, want) {
				t.Fatalf("RanksByNode = %v, upstream %v", got, want)
			}
		})
	})
}

// TestForDeletionMatchesGetPodsToDelete compares podrank.ForDeletion with
// upstream's deletion choice in two ways:
//
//   - at a chosen Now (corners included): upstream's ranks
//     (getPodsRankedByRelatedPodsOnSameNode) sorted by sort.Sort with that
//     Now, whose first k are the victims;
//   - the real getPodsToDelete, which reads the wall clock: reconcilekit is
//     given a clock reading from just before and from just after the call.
//
// Where upstream's comparator is a strict weak order, the victims must be a
// valid first k of that order (ties at the cut may go either way, as
// sort.Sort is unstable), and upstream's own answer is checked the same way;
// with k == len(pods) both return the input order. Inputs that are not a
// strict weak order are counted under excNotStrictWeakOrder with the reason.
func TestForDeletionMatchesGetPodsToDelete(t *testing.T) {
	reasons := map[string]int{}
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s, pods, related, k := deletionInput(t)
			input := slices.Clone(pods)

			// At a chosen Now.
			ranked := upstreamRankedByNode(slices.Clone(pods), related)
			ranked.Now = metav1.Time{Time: s.now}
			l := lessMatrix(slices.Clone(pods), ranked.Rank, s.now)
			got := podrank.ForDeletion(pods, related, k, podrank.Options{Now: s.now})
			addCases(1)
			if !slices.Equal(pods, input) {
				t.Fatalf("ForDeletion modified its input")
			}
			if k == len(pods) {
				if !slices.Equal(got, pods) {
					t.Fatalf("k == len: ForDeletion = %v, want the input order", names(got))
				}
			} else if why := weakOrderViolation(l); why != "" {
				noteDocumented(excNotStrictWeakOrder)
				reasons[why[:stringsIndex(why, ":")]]++
				if len(got) != k || hasDuplicates(got) || slices.Contains(indices(pods, got), -1) {
					t.Fatalf("not a strict weak order, and ForDeletion returned %v, not %d distinct input pods", names(got), k)
				}
			} else {
				sort.Sort(ranked)
				if why := validPrefix(l, indices(pods, ranked.Pods[:k]), k); why != "" {
					t.Fatalf("harness: upstream's own sort is not a valid prefix: %s", why)
				}
				if why := validPrefix(l, indices(pods, got), k); why != "" {
					t.Fatalf("ForDeletion(k=%d) = %v, upstream sorted %v: %s", k, names(got), names(ranked.Pods), why)
				}
			}

			// The real getPodsToDelete on the wall clock.
			before := time.Now()
			up := upstreamGetPodsToDelete(slices.Clone(pods), related, k)
			after := time.Now()
			addCases(1)
			ok := false
			for _, now := range []time.Time{before, after} {
				lw := lessMatrix(slices.Clone(pods), upstreamRankedByNode(pods, related).Rank, now)
				mine := podrank.ForDeletion(pods, related, k, podrank.Options{Now: now})
				if k == len(pods) {
					ok = ok || (slices.Equal(up, pods) && slices.Equal(mine, pods))
					continue
				}
				if weakOrderViolation(lw) != "" {
					noteDocumented(excNotStrictWeakOrder)
					ok = true
					break
				}
				ok = ok || (validPrefix(lw, indices(pods, up), k) == "" && validPrefix(lw, indices(pods, mine), k) == "")
			}
			if !ok {
				t.Fatalf("getPodsToDelete(k=%d) = %v, ForDeletion at %v..%v disagrees", k, names(up), before, after)
			}
		})
	})
	t.Logf("inputs that are not a strict weak order, by reason: %v", reasons)
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

func hasDuplicates(pods []*corev1.Pod) bool {
	seen := map[*corev1.Pod]bool{}
	for _, p := range pods {
		if seen[p] {
			return true
		}
		seen[p] = true
	}
	return false
}

func stringsIndex(s, sep string) int {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return i
		}
	}
	return len(s)
}

// describe prints the fields the ranking reads.
func describe(p *corev1.Pod) string {
	return fmt.Sprintf("%s uid=%q node=%q phase=%q created=%v deleting=%v conds=%v ann=%v cs=%v init=%v ics=%v",
		p.Name, p.UID, p.Spec.NodeName, p.Status.Phase, p.CreationTimestamp.Time, p.DeletionTimestamp,
		p.Status.Conditions, p.Annotations, p.Status.ContainerStatuses, p.Spec.InitContainers, p.Status.InitContainerStatuses)
}
