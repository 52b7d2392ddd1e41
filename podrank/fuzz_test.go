package podrank_test

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// FuzzForDeletion ranks pods decoded from arbitrary bytes (any phase,
// readiness, node, deletion cost, ownerRefs, timestamps; nil entries too)
// and checks that ForDeletion never panics, returns min(n, non-nil pods)
// distinct non-nil pods of the input (all of them, in input order, when n
// reaches that number), and modifies neither slice nor any pod; and that
// RanksByNode returns one rank per pod.
func FuzzForDeletion(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := pt.NewDecoder(data)
		pods := d.Pods(8, true)
		related := d.Pods(6, true)
		n := d.Intn(12) - 2
		opts := podrank.Options{
			Now:                         d.Instant(),
			DisableDeletionCost:         d.Bool(),
			DisableLogarithmicScaleDown: d.Bool(),
		}
		podsBefore, relatedBefore := deepCopies(pods), deepCopies(related)
		podsOrder, relatedOrder := append([]*corev1.Pod(nil), pods...), append([]*corev1.Pod(nil), related...)

		got := podrank.ForDeletion(pods, related, n, opts)

		var live []*corev1.Pod
		for _, p := range pods {
			if p != nil {
				live = append(live, p)
			}
		}
		want := max(0, min(n, len(live)))
		if len(got) != want {
			t.Fatalf("ForDeletion(%d pods, %d live, n=%d) returned %d pods, want %d", len(pods), len(live), n, len(got), want)
		}
		seen := map[*corev1.Pod]bool{}
		for _, p := range got {
			if p == nil {
				t.Fatal("returned a nil pod")
			}
			if seen[p] {
				t.Fatalf("returned pod %s twice", p.Name)
			}
			seen[p] = true
			if !contains(pods, p) {
				t.Fatalf("returned pod %s, which is not in the input", p.Name)
			}
		}
		if n >= len(live) && !reflect.DeepEqual(got, live) && len(live) > 0 {
			t.Fatal("n reaches every pod: want the non-nil pods in input order")
		}
		if len(got) > 0 {
			got[0] = nil // the result must not alias the input
		}
		if !slices.Equal(pods, podsOrder) || !slices.Equal(related, relatedOrder) {
			t.Fatal("the input slices were modified")
		}
		if !reflect.DeepEqual(pods, podsBefore) || !reflect.DeepEqual(related, relatedBefore) {
			t.Fatal("input pods were modified")
		}
		if ranks := podrank.RanksByNode(pods, related); len(ranks) != len(pods) {
			t.Fatalf("RanksByNode returned %d ranks for %d pods", len(ranks), len(pods))
		}
	})
}

func deepCopies(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func contains(pods []*corev1.Pod, p *corev1.Pod) bool {
	for _, q := range pods {
		if q == p {
			return true
		}
	}
	return false
}
