package podrank_test

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// This file is a reference ranking for what the real upstream code cannot
// check: the options v1.37.2 cannot run (PodDeletionCost off, the
// LogarithmicScaleDown gate it removed), the rule tables' own consistency,
// the deletion-cost parser and the log2 bucket arithmetic. Everything the
// real v1.37.2 code can decide — Compare and ForDeletion with the default
// options — is compared with it in test/conformance instead, and the
// speed comparison lives there too (make bench-upstream). It is a literal
// rendering of docs/rules.md §6 in the shape upstream's code has. Every comparison re-derives everything it needs (finds the Ready
// condition again, looks the annotation up and parses it with strconv,
// takes log2 of both durations, scans the container statuses and builds the
// set of sidecar names).
// Like upstream, it asks the feature gate whether PodDeletionCost is on in
// every comparison (a map lookup behind an atomic load); it does not copy
// PodStatus values around as upstream's readiness helpers do. Do not share
// code with the package.

// upstreamPods is ActivePodsWithRanks: pods, their ranks and Now.
type upstreamPods struct {
	pods  []*corev1.Pod
	rank  []int
	now   time.Time
	gates *featureGates
}

// featureGates stands in for the process-wide feature gate upstream reads
// on every comparison.
type featureGates struct{ enabled atomic.Value } // map[string]bool

func newGates(costOn, logOn bool) *featureGates {
	g := &featureGates{}
	g.enabled.Store(map[string]bool{"PodDeletionCost": costOn, "LogarithmicScaleDown": logOn})
	return g
}

func (g *featureGates) Enabled(name string) bool { return g.enabled.Load().(map[string]bool)[name] }

// upstreamPhase is R-6.2's table; a missing phase reads as 0.
var upstreamPhase = map[corev1.PodPhase]int{
	corev1.PodPending: 0,
	corev1.PodUnknown: 1,
	corev1.PodRunning: 2,
}

// Less is docs/rules.md §6, step by step.
func (s upstreamPods) Less(i, j int) bool {
	a, b := s.pods[i], s.pods[j]
	//
	if a.Spec.NodeName != b.Spec.NodeName && (len(a.Spec.NodeName) == 0 || len(b.Spec.NodeName) == 0) {
		return len(a.Spec.NodeName) == 0
	}
	//
	if upstreamPhase[a.Status.Phase] != upstreamPhase[b.Status.Phase] {
		return upstreamPhase[a.Status.Phase] < upstreamPhase[b.Status.Phase]
	}
	//
	if upstreamReady(a) != upstreamReady(b) {
		return !upstreamReady(a)
	}
	//
	if s.gates.Enabled("PodDeletionCost") {
		ca, _ := upstreamCost(a.Annotations)
		cb, _ := upstreamCost(b.Annotations)
		if ca != cb {
			return ca < cb
		}
	}
	//
	if s.rank[i] != s.rank[j] {
		return s.rank[i] > s.rank[j]
	}
	//
	if upstreamReady(a) && upstreamReady(b) {
		ra, rb := upstreamReadyTime(a), upstreamReadyTime(b)
		if !ra.Equal(rb) {
			return s.timeLess(ra, rb, a, b)
		}
	}
	//
	if ra, rb := upstreamRestarts(a), upstreamRestarts(b); ra != rb {
		if ra[0] != rb[0] {
			return ra[0] > rb[0]
		}
		return ra[1] > rb[1]
	}
	//
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return s.timeLess(a.CreationTimestamp.Time, b.CreationTimestamp.Time, a, b)
	}
	return false
}

// timeLess is the common tail of.
func (s upstreamPods) timeLess(ta, tb time.Time, a, b *corev1.Pod) bool {
	if !s.gates.Enabled("LogarithmicScaleDown") || s.now.IsZero() || ta.IsZero() || tb.IsZero() {
		return upstreamAfterOrZero(ta, tb)
	}
	d := upstreamLogRank(ta, s.now) - upstreamLogRank(tb, s.now)
	if d == 0 {
		return a.UID < b.UID
	}
	return d < 0
}

// upstreamReady is.
func upstreamReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// upstreamReadyTime is.
func upstreamReadyTime(p *corev1.Pod) time.Time {
	if upstreamReady(p) {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return c.LastTransitionTime.Time
			}
		}
	}
	return time.Time{}
}

// upstreamCost is.
func upstreamCost(annotations map[string]string) (int32, error) {
	v, ok := annotations["controller.kubernetes.io/pod-deletion-cost"]
	if !ok {
		return 0, nil
	}
	if len(v) == 0 || !(v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9')) {
		return 0, strconv.ErrSyntax
	}
	i, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, err
	}
	return int32(i), nil
}

// upstreamLogRank is.
func upstreamLogRank(t, now time.Time) int64 {
	d := now.Sub(t)
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}

// upstreamAfterOrZero is.
func upstreamAfterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// upstreamRestarts is: {max regular, max native sidecar}.
func upstreamRestarts(p *corev1.Pod) [2]int {
	var out [2]int
	for _, c := range p.Status.ContainerStatuses {
		out[0] = max(out[0], int(c.RestartCount))
	}
	sidecars := map[string]struct{}{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = struct{}{}
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if _, ok := sidecars[c.Name]; ok {
			out[1] = max(out[1], int(c.RestartCount))
		}
	}
	return out
}

// upstreamLess is Less on a pair, for the tables and properties.
func upstreamLess(a, b *corev1.Pod, rankA, rankB int, now time.Time, costOn, logOn bool) bool {
	s := upstreamPods{pods: []*corev1.Pod{a, b}, rank: []int{rankA, rankB}, now: now, gates: newGates(costOn, logOn)}
	return s.Less(0, 1)
}
