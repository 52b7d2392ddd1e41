package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/status"
)

func TestCount(t *testing.T) {
	pod := podtest.New
	cases := []struct {
		name        string
		active      []*corev1.Pod
		terminating []*corev1.Pod
		labels      map[string]string
		minReady    int32
		want        status.Counts
	}{
		{name: "zero Counts for no pods"},
		{name: "R-8.2 fully labeled is a superset match", labels: web,
			active: []*corev1.Pod{pod("a", podtest.Labels(map[string]string{"app": "web", "x": "y"})), pod("b")},
			want:   status.Counts{Replicas: 2, FullyLabeled: 1}},
		{name: "R-8.2 empty template labels match all",
			active: []*corev1.Pod{pod("a"), pod("b")},
			want:   status.Counts{Replicas: 2, FullyLabeled: 2}},
		{name: "R-5.4 first Ready condition decides",
			active: []*corev1.Pod{pod("a", podtest.NotReady(), podtest.Ready(t0)), pod("b", podtest.Ready(t0), podtest.NotReady())},
			want:   status.Counts{Replicas: 2, FullyLabeled: 2, Ready: 1, Available: 1}},
		{name: "R-5.5 one nanosecond short of minReadySeconds is not available", minReady: 30,
			active: []*corev1.Pod{pod("a", podtest.Ready(now.Add(-30*time.Second+time.Nanosecond)))},
			want:   status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1}},
		{name: "R-5.5 exactly minReadySeconds is available (v1.37 compares <=)", minReady: 30,
			active: []*corev1.Pod{pod("a", podtest.Ready(now.Add(-30*time.Second)))},
			want:   status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1, Available: 1}},
		{name: "R-5.5 past minReadySeconds is available", minReady: 30,
			active: []*corev1.Pod{pod("a", podtest.Ready(now.Add(-31*time.Second)))},
			want:   status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1, Available: 1}},
		{name: "R-5.5 minReadySeconds > 0 needs an LTT", minReady: 1,
			active: []*corev1.Pod{pod("a", podtest.Ready(time.Time{}))},
			want:   status.Counts{Replicas: 1, FullyLabeled: 1, Ready: 1}},
		{name: "R-8.3 terminating is the number of non-nil pods given",
			terminating: []*corev1.Pod{pod("t1", podtest.Deleting(t0)), nil, pod("t2", podtest.Phase(corev1.PodFailed))},
			want:        status.Counts{Terminating: 2}},
		{name: "R-8.2 terminating pods never count as replicas",
			active:      []*corev1.Pod{nil},
			terminating: []*corev1.Pod{pod("t", podtest.Deleting(t0), podtest.Ready(t0))},
			want:        status.Counts{Terminating: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, status.Count(c.active, c.terminating, c.labels, c.minReady, now))
		})
	}
}

// Count is what Calculate reports for an apps/v1 ReplicaSet.
func TestCountMatchesCalculateProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := rsGen(true).Draw(t, "rs")
		active, terminating := podsGen().Draw(t, "active"), podsGen().Draw(t, "terminating")
		c := status.Count(active, terminating, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, now)
		st := status.Calculate(rs, active, terminating, nil, now, status.Options{})
		assert.Equal(t, status.Counts{
			Replicas: st.Replicas, FullyLabeled: st.FullyLabeledReplicas,
			Ready: st.ReadyReplicas, Available: st.AvailableReplicas, Terminating: *st.TerminatingReplicas,
		}, c)
	})
}

func TestCountDoesNotAllocate(t *testing.T) {
	pods := benchPods(1000)
	allocs := testing.AllocsPerRun(20, func() { _ = status.Count(pods, pods[:10], web, 30, now) })
	assert.Zero(t, allocs)
}

// A template with more labels than Count's stack room costs an allocation
// per call, not one per pod.
func TestCountAllocationsWithLargeTemplate(t *testing.T) {
	big := map[string]string{}
	for i := range 40 {
		big[fmt.Sprintf("label-%d", i)] = "v"
	}
	small, large := benchPods(100), benchPods(10_000)
	allocs := func(pods []*corev1.Pod) float64 {
		return testing.AllocsPerRun(20, func() { _ = status.Count(pods, nil, big, 30, now) })
	}
	s, l := allocs(small), allocs(large)
	assert.Equal(t, s, l, "allocations must not depend on the pod count")
	assert.LessOrEqual(t, l, 2.0, "the label list (and, under -race, the map iterator)")
}
