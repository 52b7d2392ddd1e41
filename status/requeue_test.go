package status_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/status"
)

func readySince(name string, since time.Time) *corev1.Pod {
	return podtest.New(name, podtest.Ready(since))
}

func TestNextAvailabilityCheck(t *testing.T) {
	sec := time.Second
	cases := []struct {
		name     string
		pods     []*corev1.Pod
		minReady int32
		at       time.Time
		ok       bool
	}{
		{name: "R-10.8 no pods", minReady: 10},
		{name: "R-10.8 minReadySeconds 0: nothing waits", minReady: 0,
			pods: []*corev1.Pod{readySince("a", now.Add(-sec))}},
		{name: "R-10.8 negative minReadySeconds: nothing waits", minReady: -5,
			pods: []*corev1.Pod{readySince("a", now.Add(10*sec))}},
		{name: "R-10.8 a ready pod becomes available at LTT + minReadySeconds", minReady: 10,
			pods: []*corev1.Pod{readySince("a", now.Add(-3*sec))}, at: now.Add(7 * sec), ok: true},
		{name: "R-10.8 the earliest pod wins, whatever the order", minReady: 10,
			pods: []*corev1.Pod{readySince("late", now.Add(-1*sec)), readySince("early", now.Add(-8*sec)), readySince("mid", now.Add(-5*sec))},
			at:   now.Add(2 * sec), ok: true},
		{name: "R-10.8 available pods give no check", minReady: 10,
			pods: []*corev1.Pod{readySince("a", now.Add(-11*sec)), readySince("b", now.Add(-4*sec))}, at: now.Add(6 * sec), ok: true},
		{name: "R-10.8 R-5.5 a pod exactly at the boundary gives no check (already available)", minReady: 10,
			pods: []*corev1.Pod{readySince("a", now.Add(-10*sec))}},
		{name: "R-10.8 R-5.5 a pod one nanosecond short of the boundary gives a check 1ns later", minReady: 10,
			pods: []*corev1.Pod{readySince("a", now.Add(-10*sec+1))}, at: now.Add(1), ok: true},
		{name: "R-10.8 R-5.5 a pod one nanosecond past the boundary gives no check", minReady: 10,
			pods: []*corev1.Pod{readySince("a", now.Add(-10*sec-1))}},
		{name: "R-10.8 ready pods without LTT give no check", minReady: 10,
			pods: []*corev1.Pod{readySince("a", time.Time{})}},
		{name: "R-10.8 R-5.4 unready pods give no check", minReady: 10,
			pods: []*corev1.Pod{podtest.New("a", podtest.NotReady(), podtest.Ready(now))}},
		{name: "nil pods are skipped", minReady: 10,
			pods: []*corev1.Pod{nil, readySince("a", now), nil}, at: now.Add(10 * sec), ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, ok := status.NextAvailabilityCheck(c.pods, c.minReady, now)
			assert.Equal(t, c.ok, ok)
			assert.True(t, c.at.Equal(at), "at %v, want %v", at, c.at)
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	sec := time.Second
	pending := []*corev1.Pod{readySince("a", now.Add(-8*sec)), readySince("b", now.Add(-5*sec))} // checks at now+2s, now+5s
	cases := []struct {
		name             string
		ready, available int32
		pods             []*corev1.Pod
		minReady         int32
		later            time.Time
		delay            time.Duration
		ok               bool
	}{
		{name: "R-10.8 minReadySeconds 0: no requeue", ready: 2, available: 1, pods: pending, later: now},
		{name: "R-10.8 negative minReadySeconds: no requeue", ready: 2, available: 1, pods: pending, minReady: -1, later: now},
		{name: "R-10.8 ready == available: no requeue", ready: 2, available: 2, pods: pending, minReady: 10, later: now},
		{name: "R-10.8 the next check, measured from later", ready: 2, available: 0, pods: pending, minReady: 10,
			later: now.Add(500 * time.Millisecond), delay: 1500 * time.Millisecond, ok: true},
		{name: "R-10.8 the pod is chosen with now, the delay clamped at 0 with later", ready: 2, available: 0, pods: pending, minReady: 10,
			later: now.Add(3 * sec), delay: 0, ok: true},
		{name: "R-10.8 without a check the fallback is minReadySeconds", ready: 1, available: 0, minReady: 10,
			pods: []*corev1.Pod{readySince("a", time.Time{})}, later: now.Add(sec), delay: 10 * sec, ok: true},
		{name: "R-10.8 any difference between ready and available counts", ready: 0, available: 1, minReady: 10,
			later: now, delay: 10 * sec, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(c.pods)
			delay, ok := status.RequeueAfter(c.ready, c.available, c.pods, c.minReady, now, c.later)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.delay, delay)
			assert.Equal(t, before, c.pods)
		})
	}
}

// with: the next check is exactly the moment a new pod becomes
// available — nothing changes before it, and the available count grows at
// it (R-5.5 counts the exact instant); without a check nothing becomes
// available later. With later == now, the requeue delay lies in
// [0, minReadySeconds] for pods that turned ready at or before now.
func TestNextAvailabilityCheckProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := podsGen().Draw(t, "pods")
		minReady := int32(rapid.IntRange(-2, 12).Draw(t, "minReady"))
		before := status.Count(pods, nil, nil, minReady, now)
		// Pods exactly at the boundary now are already available
		// and give no check (R-10.8 wants a positive wait).
		soon := before.Available

		at, ok := status.NextAvailabilityCheck(pods, minReady, now)
		if ok {
			if !at.After(now) {
				t.Fatalf("check %v not after now %v", at, now)
			}
			assert.Equal(t, soon, status.Count(pods, nil, nil, minReady, at.Add(-time.Nanosecond)).Available, "not yet before the check")
			assert.Greater(t, status.Count(pods, nil, nil, minReady, at).Available, soon, "available at the check")
		} else if minReady > 0 {
			assert.Equal(t, soon, status.Count(pods, nil, nil, minReady, now.Add(time.Hour)).Available)
		}

		delay, requeue := status.RequeueAfter(before.Ready, before.Available, pods, minReady, now, now)
		assert.Equal(t, minReady > 0 && before.Ready != before.Available, requeue)
		if requeue {
			assert.GreaterOrEqual(t, delay, time.Duration(0))
			assert.LessOrEqual(t, delay, time.Duration(minReady)*time.Second)
		}
	})
}

func TestNextAvailabilityCheckDoesNotAllocate(t *testing.T) {
	pods := benchPods(1000)
	assert.Zero(t, testing.AllocsPerRun(20, func() { _, _ = status.NextAvailabilityCheck(pods, 30, now) }))
}
