package podrank_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

func TestRanksByNode(t *testing.T) {
	a1 := pt.New("a1", pt.Node("a"))
	a2 := pt.New("a2", pt.Node("a"), pt.NotReady())
	b1 := pt.New("b1", pt.Node("b"))
	u1 := pt.New("u1")
	aDone := pt.New("aDone", pt.Node("a"), pt.Phase(corev1.PodSucceeded))
	aGone := pt.New("aGone", pt.Node("a"), pt.Deleting(t0))
	aPending := pt.New("aPending", pt.Node("a"), pt.Phase(corev1.PodPending))

	cases := []struct {
		name          string
		pods, related []*corev1.Pod
		want          []int
	}{
		{"R-7.1 counts related pods per node", []*corev1.Pod{a1, b1}, []*corev1.Pod{a1, a2, b1}, []int{2, 1}},
		{"R-7.1 readiness plays no part", []*corev1.Pod{a1}, []*corev1.Pod{a2}, []int{1}},
		{"R-7.1 pending related pods count", []*corev1.Pod{a1}, []*corev1.Pod{aPending}, []int{1}},
		{"R-7.1 terminal and terminating related pods do not count", []*corev1.Pod{a1}, []*corev1.Pod{aDone, aGone}, []int{0}},
		{"R-7.1 the empty node name is a bucket of its own", []*corev1.Pod{u1, a1}, []*corev1.Pod{u1, u1, a1}, []int{2, 1}},
		{"R-7.1 pods need not be in related", []*corev1.Pod{a1, b1}, []*corev1.Pod{a2}, []int{1, 0}},
		{"R-7.2 no related pods means all ranks 0", []*corev1.Pod{a1, b1}, nil, []int{0, 0}},
		{"R-7.1 duplicates in related count twice", []*corev1.Pod{a1}, []*corev1.Pod{a1, a1}, []int{2}},
		{"nil pods rank 0 and nil related pods are ignored", []*corev1.Pod{nil, a1}, []*corev1.Pod{nil, a1}, []int{0, 1}},
		{"no pods", nil, []*corev1.Pod{a1}, []int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, podrank.RanksByNode(c.pods, c.related))
		})
	}
}
