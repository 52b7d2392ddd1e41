package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/status"
)

func TestCalculate(t *testing.T) {
	pod := podtest.New
	ready := func(name string, since time.Time) *corev1.Pod {
		return pod(name, podtest.Labels(web), podtest.Ready(since))
	}
	a, b := otherCond("A"), otherCond("B")
	oldFailure := failureCond(status.FailedDelete, "old message", t0)
	newFailure := func(reason string) appsv1.ReplicaSetCondition { return failureCond(reason, errSync.Error(), now) }
	noTemplateLabels := replicaSet(1, 0)
	noTemplateLabels.Spec.Template.Labels = nil
	nilReplicas := replicaSet(0, 0)
	nilReplicas.Spec.Replicas = nil

	type counts struct{ replicas, labeled, ready, available int32 }
	cases := []struct {
		name        string
		rs          *appsv1.ReplicaSet
		active      []*corev1.Pod
		terminating []*corev1.Pod
		err         error
		opts        status.Options
		counts      counts
		term        *int32 // expected TerminatingReplicas
		conds       []appsv1.ReplicaSetCondition
	}{
		// counts.
		{name: "R-8.2 no pods", rs: replicaSet(0, 0), term: ptr(int32(0))},
		{name: "R-8.2 fully labeled means a superset of the template labels", rs: replicaSet(3, 0),
			active: []*corev1.Pod{
				pod("extra", podtest.Labels(map[string]string{"app": "web", "tier": "x"})),
				pod("other", podtest.Labels(map[string]string{"app": "db"})),
				pod("none"),
			},
			counts: counts{3, 1, 0, 0}, term: ptr(int32(0))},
		{name: "R-8.2 empty template labels match every pod", rs: noTemplateLabels,
			active: []*corev1.Pod{pod("a"), pod("b", podtest.Labels(map[string]string{"x": "y"}))},
			counts: counts{2, 2, 0, 0}, term: ptr(int32(0))},
		{name: "R-8.2 pods in active are counted as given, even terminal or deleting ones", rs: replicaSet(2, 0),
			active: []*corev1.Pod{
				ready("done", t0), pod("gone", podtest.Labels(web), podtest.Deleting(t0)),
				pod("failed", podtest.Phase(corev1.PodFailed)),
			},
			counts: counts{3, 2, 1, 1}, term: ptr(int32(0))},
		{name: "R-8.2 terminating pods are not counted as replicas", rs: replicaSet(1, 0),
			active:      []*corev1.Pod{ready("a", t0)},
			terminating: []*corev1.Pod{ready("t1", t0), ready("t2", t0)},
			counts:      counts{1, 1, 1, 1}, term: ptr(int32(2))},
		{name: "nil pods are skipped in both slices", rs: replicaSet(1, 0),
			active:      []*corev1.Pod{nil, ready("a", t0), nil},
			terminating: []*corev1.Pod{nil},
			counts:      counts{1, 1, 1, 1}, term: ptr(int32(0))},
		// readiness.
		{name: "R-5.4 the first Ready condition decides", rs: replicaSet(2, 0),
			active: []*corev1.Pod{
				pod("late-true", podtest.NotReady(), podtest.Ready(t0)),
				pod("late-false", podtest.Ready(t0), podtest.NotReady()),
			},
			counts: counts{2, 0, 1, 1}, term: ptr(int32(0))},
		{name: "R-5.4 no Ready condition is not ready", rs: replicaSet(1, 0),
			active: []*corev1.Pod{pod("a", podtest.Condition(corev1.PodScheduled, corev1.ConditionTrue, t0))},
			counts: counts{1, 0, 0, 0}, term: ptr(int32(0))},
		// availability.
		{name: "R-5.5 one nanosecond short of minReadySeconds is not available", rs: replicaSet(1, 10),
			active: []*corev1.Pod{ready("a", now.Add(-10*time.Second+time.Nanosecond))},
			counts: counts{1, 1, 1, 0}, term: ptr(int32(0))},
		{name: "R-5.5 exactly minReadySeconds is available (v1.37 compares <=)", rs: replicaSet(1, 10),
			active: []*corev1.Pod{ready("a", now.Add(-10*time.Second))},
			counts: counts{1, 1, 1, 1}, term: ptr(int32(0))},
		{name: "R-5.5 one nanosecond past minReadySeconds is available", rs: replicaSet(1, 10),
			active: []*corev1.Pod{ready("a", now.Add(-10*time.Second-time.Nanosecond))},
			counts: counts{1, 1, 1, 1}, term: ptr(int32(0))},
		{name: "R-5.5 minReadySeconds 0 makes a ready pod without LTT available", rs: replicaSet(1, 0),
			active: []*corev1.Pod{ready("a", time.Time{})},
			counts: counts{1, 1, 1, 1}, term: ptr(int32(0))},
		{name: "R-5.5 minReadySeconds > 0 needs an LTT", rs: replicaSet(1, 1),
			active: []*corev1.Pod{ready("a", time.Time{})},
			counts: counts{1, 1, 1, 0}, term: ptr(int32(0))},
		{name: "R-5.5 negative minReadySeconds is compared arithmetically", rs: replicaSet(2, -10),
			active: []*corev1.Pod{ready("future", now.Add(5*time.Second)), ready("no-ltt", time.Time{})},
			counts: counts{2, 2, 2, 1}, term: ptr(int32(0))},
		// terminating replicas.
		{name: "R-8.3 terminatingReplicas is a pointer to 0 when none", rs: replicaSet(0, 0), term: ptr(int32(0))},
		{name: "R-8.3 terminatingReplicas counts the slice as given", rs: replicaSet(0, 0),
			terminating: []*corev1.Pod{pod("t1", podtest.Deleting(t0)), pod("t2")},
			term:        ptr(int32(2))},
		{name: "R-8.3 R-1.8 disabled leaves terminatingReplicas nil", rs: replicaSet(0, 0),
			terminating: []*corev1.Pod{pod("t1", podtest.Deleting(t0))},
			opts:        status.Options{DisableTerminatingReplicas: true}},
		// ReplicaFailure.
		{name: "R-8.4 error with fewer pods adds FailedCreate at now", rs: replicaSet(2, 0),
			active: []*corev1.Pod{pod("a")}, err: errSync,
			counts: counts{1, 0, 0, 0}, term: ptr(int32(0)),
			conds: []appsv1.ReplicaSetCondition{newFailure(status.FailedCreate)}},
		{name: "R-8.4 error with more pods adds FailedDelete", rs: replicaSet(0, 0),
			active: []*corev1.Pod{pod("a")}, err: errSync,
			counts: counts{1, 0, 0, 0}, term: ptr(int32(0)),
			conds: []appsv1.ReplicaSetCondition{newFailure(status.FailedDelete)}},
		{name: "R-8.4 error with matching counts adds an empty reason", rs: replicaSet(1, 0),
			active: []*corev1.Pod{pod("a")}, err: errSync,
			counts: counts{1, 0, 0, 0}, term: ptr(int32(0)),
			conds: []appsv1.ReplicaSetCondition{newFailure("")}},
		{name: "R-8.4 nil Spec.Replicas counts as 1 (equal)", rs: nilReplicas,
			active: []*corev1.Pod{pod("a")}, err: errSync,
			counts: counts{1, 0, 0, 0}, term: ptr(int32(0)),
			conds: []appsv1.ReplicaSetCondition{newFailure("")}},
		{name: "R-8.4 nil Spec.Replicas counts as 1 (fewer)", rs: nilReplicas, err: errSync,
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{newFailure(status.FailedCreate)}},
		{name: "R-8.4 the reason counts nil pods out", rs: replicaSet(1, 0),
			active: []*corev1.Pod{nil, nil}, err: errSync,
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{newFailure(status.FailedCreate)}},
		{name: "R-8.4 a new condition goes last, others keep their order", rs: replicaSet(1, 0, b, a), err: errSync,
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{b, a, newFailure(status.FailedCreate)}},
		{name: "R-8.4 an existing condition is kept untouched even if the reason would differ",
			rs: replicaSet(3, 0, a, oldFailure), err: errSync,
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{a, oldFailure}},
		{name: "R-8.4 no error removes the last condition: nil, not empty", rs: replicaSet(0, 0, oldFailure),
			term: ptr(int32(0))},
		{name: "R-8.4 no error removes every ReplicaFailure, others keep their order",
			rs:   replicaSet(0, 0, b, oldFailure, a, failureCond("", "x", t0)),
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{b, a}},
		{name: "R-8.4 neither keeps an empty list empty", rs: replicaSet(0, 0, []appsv1.ReplicaSetCondition{}...),
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{}},
		{name: "R-8.4 neither keeps the list", rs: replicaSet(0, 0, a, b),
			term: ptr(int32(0)), conds: []appsv1.ReplicaSetCondition{a, b}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := status.Calculate(c.rs, c.active, c.terminating, c.err, now, c.opts)
			want := appsv1.ReplicaSetStatus{
				Replicas: c.counts.replicas, FullyLabeledReplicas: c.counts.labeled,
				ReadyReplicas: c.counts.ready, AvailableReplicas: c.counts.available,
				TerminatingReplicas: c.term,
				ObservedGeneration:  c.rs.Status.ObservedGeneration,
				Conditions:          c.conds,
			}
			assert.Equal(t, want, got)
		})
	}
}

// and the DESIGN contract: nil and empty condition lists are distinct
// results; pin each form explicitly rather than through assert.Equal alone.
func TestCalculateConditionForms(t *testing.T) {
	removed := status.Calculate(replicaSet(0, 0, failureCond("", "x", t0)), nil, nil, nil, now, status.Options{})
	assert.Nil(t, removed.Conditions, "R-8.4 removing the last condition yields nil")

	empty := status.Calculate(replicaSet(0, 0, []appsv1.ReplicaSetCondition{}...), nil, nil, nil, now, status.Options{})
	assert.NotNil(t, empty.Conditions, "an unchanged empty list stays empty, not nil")
	assert.Empty(t, empty.Conditions)

	none := status.Calculate(replicaSet(0, 0), nil, nil, nil, now, status.Options{})
	assert.Nil(t, none.Conditions, "an unchanged nil list stays nil")
}

// observedGeneration and the rest of the old status are
// carried over; only the computed fields change.
func TestCalculateKeepsObservedGeneration(t *testing.T) {
	rs := replicaSet(1, 0)
	rs.Generation, rs.Status.ObservedGeneration = 9, 4
	rs.Status.Replicas, rs.Status.ReadyReplicas = 7, 7
	got := status.Calculate(rs, nil, nil, nil, now, status.Options{})
	assert.Equal(t, int64(4), got.ObservedGeneration)
	assert.Zero(t, got.Replicas)
	assert.Zero(t, got.ReadyReplicas)
}

func TestCalculateNilReplicaSet(t *testing.T) {
	pods := []*corev1.Pod{podtest.New("a", podtest.Ready(t0)), podtest.New("b")}
	got := status.Calculate(nil, pods, nil, errSync, now, status.Options{})
	// An empty ReplicaSet: no template labels (all match), minReadySeconds 0,
	// nil Spec.Replicas = 1 desired, so two pods are too many.
	assert.Equal(t, appsv1.ReplicaSetStatus{
		Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1,
		TerminatingReplicas: ptr(int32(0)),
		Conditions:          []appsv1.ReplicaSetCondition{failureCond(status.FailedDelete, errSync.Error(), now)},
	}, got)
}

// Never modifies rs or the pods, and the result shares no memory with rs.
func TestCalculateDoesNotMutateOrAlias(t *testing.T) {
	for _, err := range []error{nil, errSync} {
		t.Run(fmt.Sprintf("err=%v", err), func(t *testing.T) {
			rs := replicaSet(3, 5, otherCond("A"), otherCond("B"))
			rs.Status.TerminatingReplicas = ptr(int32(4))
			active := []*corev1.Pod{podtest.New("b", podtest.Ready(t0)), nil, podtest.New("a", podtest.Labels(web))}
			terminating := []*corev1.Pod{podtest.New("t", podtest.Deleting(t0))}
			rsBefore, activeBefore, termBefore := rs.DeepCopy(), snapshot(active), snapshot(terminating)
			activeOrder := append([]*corev1.Pod(nil), active...)

			got := status.Calculate(rs, active, terminating, err, now, status.Options{})

			assert.Equal(t, rsBefore, rs)
			assert.Equal(t, activeBefore, active)
			assert.Equal(t, termBefore, terminating)
			assert.Equal(t, activeOrder, active, "pointers keep their order")

			require.NotEmpty(t, got.Conditions)
			assert.NotSame(t, &rs.Status.Conditions[0], &got.Conditions[0], "conditions are copied")
			assert.NotSame(t, rs.Status.TerminatingReplicas, got.TerminatingReplicas)
			got.Conditions[0].Reason = "Changed"
			*got.TerminatingReplicas = 99
			assert.Equal(t, rsBefore, rs, "writing into the result leaves rs alone")
		})
	}
}

// ---- properties ----

// available ≤ ready ≤ replicas, fullyLabeled ≤ replicas, and replicas is the
// number of non-nil pods given; inputs are never modified.
func TestCalculateCountsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := rsGen(true).Draw(t, "rs")
		active, terminating := podsGen().Draw(t, "active"), podsGen().Draw(t, "terminating")
		rsBefore, activeBefore, termBefore := rs.DeepCopy(), snapshot(active), snapshot(terminating)

		got := status.Calculate(rs, active, terminating, nil, now, status.Options{})

		nonNil := int32(0)
		for _, p := range active {
			if p != nil {
				nonNil++
			}
		}
		if got.Replicas != nonNil {
			t.Fatalf("replicas %d, want %d non-nil pods", got.Replicas, nonNil)
		}
		if got.AvailableReplicas > got.ReadyReplicas || got.ReadyReplicas > got.Replicas {
			t.Fatalf("want available %d ≤ ready %d ≤ replicas %d", got.AvailableReplicas, got.ReadyReplicas, got.Replicas)
		}
		if got.FullyLabeledReplicas > got.Replicas {
			t.Fatalf("fullyLabeled %d > replicas %d", got.FullyLabeledReplicas, got.Replicas)
		}
		assert.Equal(t, rsBefore, rs)
		assert.Equal(t, activeBefore, active)
		assert.Equal(t, termBefore, terminating)
	})
}

// with filters: from an arbitrary pod list, the pods a
// caller passes through podrank's filters give terminatingReplicas = exactly
// the non-terminal pods with a deletion timestamp, and replicas = exactly the
// non-terminal pods without one. Without filtering, the slice length as given
// is reported; with the switch off, nil.
func TestTerminatingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		all := podsGen().Draw(t, "pods")
		var active, terminating []*corev1.Pod
		var wantActive, wantTerminating int32
		for _, p := range all {
			if podrank.IsActive(p) {
				active = append(active, p)
			}
			if podrank.IsTerminating(p) {
				terminating = append(terminating, p)
			}
			if p == nil {
				continue
			}
			terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			switch {
			case !terminal && p.DeletionTimestamp != nil:
				wantTerminating++
			case !terminal:
				wantActive++
			}
		}
		rs := rsGen(true).Draw(t, "rs")
		got := status.Calculate(rs, active, terminating, nil, now, status.Options{})
		require.NotNil(t, got.TerminatingReplicas)
		assert.Equal(t, wantTerminating, *got.TerminatingReplicas)
		assert.Equal(t, wantActive, got.Replicas)

		var raw []*corev1.Pod
		for _, p := range all {
			if p != nil {
				raw = append(raw, p)
			}
		}
		got = status.Calculate(rs, nil, raw, nil, now, status.Options{})
		require.NotNil(t, got.TerminatingReplicas)
		assert.Equal(t, int32(len(raw)), *got.TerminatingReplicas, "the slice as given")

		got = status.Calculate(rs, nil, raw, nil, now, status.Options{DisableTerminatingReplicas: true})
		assert.Nil(t, got.TerminatingReplicas)
	})
}

// given no ReplicaFailure before, one is present afterwards iff there
// was a manage error; other conditions survive in order either way.
func TestReplicaFailureProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := rsGen(false).Draw(t, "rs")
		var err error
		if rapid.Bool().Draw(t, "failed") {
			err = errSync
		}
		got := status.Calculate(rs, podsGen().Draw(t, "active"), nil, err, now, status.Options{})
		n := 0
		var others []appsv1.ReplicaSetCondition
		for _, c := range got.Conditions {
			if c.Type == ReplicaFailureType {
				n++
			} else {
				others = append(others, c)
			}
		}
		assert.Equal(t, err != nil, n == 1)
		assert.LessOrEqual(t, n, 1)
		assert.Equal(t, len(rs.Status.Conditions), len(others))
		for i := range others {
			assert.Equal(t, rs.Status.Conditions[i], others[i])
		}
	})
}

// Calculate is idempotent: computing again from a ReplicaSet that already
// carries the result (same inputs, same now) gives the same status, and
// then no write is needed once the generation was observed.
func TestCalculateIdempotentProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := rsGen(true).Draw(t, "rs")
		active, terminating := podsGen().Draw(t, "active"), podsGen().Draw(t, "terminating")
		var err error
		if rapid.Bool().Draw(t, "failed") {
			err = errSync
		}
		opts := status.Options{DisableTerminatingReplicas: rapid.Bool().Draw(t, "disableTerminating")}

		first := status.Calculate(rs, active, terminating, err, now, opts)
		again := rs.DeepCopy()
		again.Status = first
		second := status.Calculate(again, active, terminating, err, now, opts)
		assert.Equal(t, first, second)

		again.Generation = again.Status.ObservedGeneration
		assert.False(t, status.NeedsUpdate(again, second))
	})
}

// ---- allocations and benchmarks ----

func benchPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		var opts []podtest.Option
		if i%4 != 0 {
			opts = append(opts, podtest.Labels(web))
		}
		switch i % 3 {
		case 0:
			opts = append(opts, podtest.Ready(now.Add(-time.Minute)))
		case 1:
			opts = append(opts, podtest.Ready(now.Add(-time.Second)))
		default:
			opts = append(opts, podtest.NotReady())
		}
		pods[i] = podtest.New(fmt.Sprintf("p%d", i), opts...)
	}
	return pods
}

type allocCase struct {
	name  string
	conds []appsv1.ReplicaSetCondition
	err   error
}

var allocCases = []allocCase{
	{"steady", []appsv1.ReplicaSetCondition{otherCond("A")}, nil},
	{"add-failure", []appsv1.ReplicaSetCondition{otherCond("A")}, errSync},
	{"remove-failure", []appsv1.ReplicaSetCondition{otherCond("A"), failureCond("", "x", t0)}, nil},
}

// Acceptance: Calculate does not allocate per pod. The allocation count
// (TerminatingReplicas and the condition slice) is the same for 100 and for
// 10,000 pods.
func TestCalculateAllocationsIndependentOfPodCount(t *testing.T) {
	small, large := benchPods(100), benchPods(10_000)
	term := benchPods(50)
	for _, c := range allocCases {
		t.Run(c.name, func(t *testing.T) {
			rs := replicaSet(10, 30, c.conds...)
			allocs := func(pods []*corev1.Pod) float64 {
				return testing.AllocsPerRun(20, func() {
					_ = status.Calculate(rs, pods, term, c.err, now, status.Options{})
				})
			}
			s, l := allocs(small), allocs(large)
			assert.Equal(t, s, l, "allocations must not depend on the pod count")
			assert.LessOrEqual(t, l, 2.0, "at most TerminatingReplicas and the condition slice")
		})
	}
}

func BenchmarkCalculate(b *testing.B) {
	term := benchPods(10)
	for _, c := range allocCases {
		for _, n := range []int{100, 10_000} {
			pods := benchPods(n)
			rs := replicaSet(int32(n), 30, c.conds...)
			b.Run(fmt.Sprintf("%s/pods=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = status.Calculate(rs, pods, term, c.err, now, status.Options{})
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pod")
			})
		}
	}
}
