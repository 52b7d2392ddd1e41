package podrank_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

func TestForDeletion(t *testing.T) {
	ready := pt.New("ready", pt.Node("a"), pt.Ready(t0))
	notReady := pt.New("notReady", pt.Node("a"), pt.NotReady())
	unscheduled := pt.New("unscheduled", pt.Ready(t0))
	pending := pt.New("pending", pt.Node("a"), pt.Phase(corev1.PodPending))
	all := []*corev1.Pod{ready, notReady, unscheduled, pending}
	onA := pt.New("onA", pt.Node("a"), pt.Ready(t0))
	onB := pt.New("onB", pt.Node("b"), pt.Ready(t0))
	later := pt.New("later", pt.UID("a"), pt.Ready(t0.Add(1)))
	earlier := pt.New("earlier", pt.UID("b"), pt.Ready(t0))

	cases := []struct {
		name          string
		pods, related []*corev1.Pod
		n             int
		opts          podrank.Options
		want          []*corev1.Pod
	}{
		{"R-7.3 n = 0 returns nothing", all, nil, 0, podrank.Options{}, []*corev1.Pod{}},
		{"R-7.3 negative n returns nothing", all, nil, -3, podrank.Options{}, []*corev1.Pod{}},
		{"R-7.3 n = len keeps input order, no ranking", all, nil, 4, podrank.Options{}, all},
		{"R-7.3 n > len keeps input order", all, nil, 10, podrank.Options{}, all},
		{"R-7.3 n < len returns the first n in deletion order", all, nil, 3, podrank.Options{}, []*corev1.Pod{unscheduled, pending, notReady}},
		{"R-7.3 n = 1 picks the first", all, nil, 1, podrank.Options{}, []*corev1.Pod{unscheduled}},
		{"R-7.3 ranks come from related (R-7.1)", []*corev1.Pod{onA, onB}, []*corev1.Pod{onA, onB, pt.New("x", pt.Node("b"))}, 1, podrank.Options{}, []*corev1.Pod{onB}},
		{"R-7.3 terminating related pods do not rank (R-7.1)", []*corev1.Pod{onB, onA}, []*corev1.Pod{onA, pt.New("x", pt.Node("b"), pt.Deleting(t0))}, 1, podrank.Options{}, []*corev1.Pod{onA}},
		{"R-7.3 zero Now compares ready times exactly (R-6.6)", []*corev1.Pod{earlier, later}, nil, 1, podrank.Options{}, []*corev1.Pod{later}},
		{"R-7.3 Now set: same bucket, UID decides (R-6.6)", []*corev1.Pod{later, earlier}, nil, 1, podrank.Options{Now: t0.Add(time.Hour)}, []*corev1.Pod{later}},
		{"R-7.3 Now set: UID decides the other way", []*corev1.Pod{later, earlier}, nil, 1, podrank.Options{Now: t0.Add(time.Hour), DisableLogarithmicScaleDown: true}, []*corev1.Pod{later}},
		{"nil pods are skipped when all go", []*corev1.Pod{nil, ready, nil, notReady}, nil, 2, podrank.Options{}, []*corev1.Pod{ready, notReady}},
		{"nil pods are skipped when ranking", []*corev1.Pod{nil, ready, nil, notReady}, nil, 1, podrank.Options{}, []*corev1.Pod{notReady}},
		{"only nil pods", []*corev1.Pod{nil, nil}, nil, 1, podrank.Options{}, []*corev1.Pod{}},
		{"no pods", nil, nil, 1, podrank.Options{}, []*corev1.Pod{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.pods)
			got := podrank.ForDeletion(c.pods, c.related, c.n, c.opts)
			assert.Equal(t, c.want, got)
			assert.NotNil(t, got)
			assert.Equal(t, in, c.pods, "input not reordered")
		})
	}
	t.Run("R-7.3 the result never aliases the input", func(t *testing.T) {
		for _, n := range []int{2, 4} {
			pods := slices.Clone(all)
			got := podrank.ForDeletion(pods, nil, n, podrank.Options{})
			got[0] = nil
			assert.Equal(t, all, pods, "n=%d", n)
		}
	})
}

// snapshot deep-copies pods so a later comparison sees any modification.
func snapshot(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func live(pods []*corev1.Pod) []*corev1.Pod {
	return slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return p == nil })
}

// checkBasics asserts what every ForDeletion result satisfies: the input
// unchanged, min(n, live) distinct pods of the input, and input order when
// every pod goes.
func checkBasics(t require.TestingT, pods, related []*corev1.Pod, n int, opts podrank.Options) []*corev1.Pod {
	order, deep := slices.Clone(pods), snapshot(pods)
	relOrder, relDeep := slices.Clone(related), snapshot(related)
	got := podrank.ForDeletion(pods, related, n, opts)
	require.Equal(t, order, pods, "input slice reordered")
	require.Equal(t, deep, snapshot(pods), "input pods modified")
	require.Equal(t, relOrder, related, "related slice reordered")
	require.Equal(t, relDeep, snapshot(related), "related pods modified")
	l := live(pods)
	require.Len(t, got, min(max(n, 0), len(l)))
	seen := map[*corev1.Pod]bool{}
	for _, p := range got {
		require.NotNil(t, p)
		require.Contains(t, l, p)
		require.False(t, seen[p], "pod %p returned twice", p)
		seen[p] = true
	}
	if n >= len(l) {
		require.Equal(t, l, got, "R-7.3 all pods go in input order")
	}
	return got
}

func relatedGen(pods []*corev1.Pod) *rapid.Generator[[]*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) []*corev1.Pod {
		var rel []*corev1.Pod
		for _, p := range pods {
			if rapid.Bool().Draw(t, "related") {
				rel = append(rel, p)
			}
		}
		return append(rel, rapid.SliceOfN(nilOr(podGen()), 0, 4).Draw(t, "siblings")...)
	})
}

func TestPropertyForDeletionBasics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := rapid.SliceOfN(nilOr(podGen()), 0, 20).Draw(t, "pods")
		related := relatedGen(pods).Draw(t, "related")
		n := rapid.IntRange(-1, len(pods)+1).Draw(t, "n")
		checkBasics(t, pods, related, n, optsGen().Draw(t, "opts"))
	})
}

// rankedOf pairs pods with their RanksByNode ranks.
func rankedOf(pods, related []*corev1.Pod) map[*corev1.Pod]podrank.Ranked {
	ranks := podrank.RanksByNode(pods, related)
	out := make(map[*corev1.Pod]podrank.Ranked, len(pods))
	for i, p := range pods {
		out[p] = podrank.Ranked{Pod: p, Rank: ranks[i]}
	}
	return out
}

// totalPodGen draws pods on which Compare is a strict total order: unique
// UIDs, and ready and creation times that are distinct, non-zero instants
// across all pods, so every pair is decided by R-6.6 (both ready) or at
// the latest by, and the deciding keys are lexicographic.
func totalPodsGen() *rapid.Generator[[]*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) []*corev1.Pod {
		n := rapid.IntRange(1, 80).Draw(t, "n")
		// Offsets in seconds from t0, spread over a few buckets either side of Now.
		offsets := rapid.SliceOfNDistinct(rapid.IntRange(-20000, 20000), 2*n, 2*n, rapid.ID[int]).Draw(t, "offsets")
		pods := make([]*corev1.Pod, n)
		for i := range pods {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name:              fmt.Sprintf("p%d", i),
					UID:               types.UID(fmt.Sprintf("uid-%02d", rapid.IntRange(0, 99).Draw(t, "uidSalt")*100+i)),
					CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(offsets[2*i]) * time.Second)),
				},
				Spec:   corev1.PodSpec{NodeName: rapid.SampledFrom([]string{"", "n1", "n2", "n3"}).Draw(t, "node")},
				Status: corev1.PodStatus{Phase: rapid.SampledFrom(phases).Draw(t, "phase")},
			}
			if rapid.IntRange(0, 3).Draw(t, "ready") > 0 {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(offsets[2*i+1]) * time.Second))}}
			}
			if rapid.IntRange(0, 3).Draw(t, "costly") == 0 {
				p.Annotations = map[string]string{podrank.DeletionCostAnnotation: rapid.SampledFrom([]string{"-1", "0", "1"}).Draw(t, "cost")}
			}
			if rapid.IntRange(0, 3).Draw(t, "restarting") == 0 {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: rapid.Int32Range(0, 2).Draw(t, "restarts")}}
			}
			pods[i] = p
		}
		return pods
	})
}

func TestPropertyForDeletionTotalOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := totalPodsGen().Draw(t, "pods")
		related := relatedGen(pods).Draw(t, "related")
		opts := podrank.Options{
			Now:                         rapid.SampledFrom([]time.Time{{}, t0, t0.Add(2 * time.Hour)}).Draw(t, "now"),
			DisableDeletionCost:         rapid.Bool().Draw(t, "noCost"),
			DisableLogarithmicScaleDown: rapid.Bool().Draw(t, "noLog"),
		}
		ranked := rankedOf(pods, related)
		cmp := func(a, b *corev1.Pod) int { return podrank.Compare(ranked[a], ranked[b], opts) }
		// Make sure the order really is total: no ties, transitive.
		for _, a := range pods {
			for _, b := range pods {
				if a != b {
					require.NotZero(t, cmp(a, b), "tie between %s and %s", a.Name, b.Name)
				}
			}
		}
		sorted := slices.Clone(pods)
		slices.SortFunc(sorted, cmp)
		for i := 1; i < len(sorted); i++ {
			for j := i; j < len(sorted); j++ {
				require.Negative(t, cmp(sorted[i-1], sorted[j]), "not transitive")
			}
		}
		n := rapid.IntRange(1, len(pods)).Draw(t, "n")
		perm := rapid.Permutation(pods).Draw(t, "permutation")
		got := checkBasics(t, perm, related, n, opts)
		if n < len(pods) {
			require.Equal(t, sorted[:n], got, "the first n of the full sort")
		}
	})
}

// TestPropertyForDeletionValidPrefix draws arbitrary pods, full of ties.
// Whenever Compare happens to be a strict weak order on them (R-6.14 says
// it need not be), the result must be sorted and no pod left out may sort
// strictly before a pod that was chosen.
func TestPropertyForDeletionValidPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := rapid.SliceOfN(podGen(), 1, 12).Draw(t, "pods")
		related := relatedGen(pods).Draw(t, "related")
		opts := optsGen().Draw(t, "opts")
		n := rapid.IntRange(1, len(pods)).Draw(t, "n")
		got := checkBasics(t, pods, related, n, opts)
		ranked := rankedOf(pods, related)
		cmp := func(a, b *corev1.Pod) int { return podrank.Compare(ranked[a], ranked[b], opts) }
		if n == len(pods) || !strictWeakOrder(pods, cmp) {
			return // no ranking when every pod goes
		}
		for i := 1; i < len(got); i++ {
			require.LessOrEqual(t, cmp(got[i-1], got[i]), 0, "result not in deletion order")
		}
		for _, o := range pods {
			if slices.Contains(got, o) {
				continue
			}
			for _, s := range got {
				require.GreaterOrEqual(t, cmp(o, s), 0, "%s left out but sorts before chosen %s", o.Name, s.Name)
			}
		}
	})
}

// strictWeakOrder reports whether cmp is a strict weak order on pods:
// "before" and "tied" are both transitive.
func strictWeakOrder(pods []*corev1.Pod, cmp func(a, b *corev1.Pod) int) bool {
	for _, a := range pods {
		for _, b := range pods {
			ab := cmp(a, b)
			for _, c := range pods {
				bc, ac := cmp(b, c), cmp(a, c)
				if ab < 0 && bc < 0 && ac >= 0 {
					return false
				}
				if ab == 0 && bc == 0 && ac != 0 {
					return false
				}
			}
		}
	}
	return true
}
