package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

var (
	t0    = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	lease = leaseRef{"kube-system", "kube-controller-manager"}
)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func leaseEv(user, verb string, code int, s float64) controlplane.AuditEvent {
	return controlplane.AuditEvent{User: user, Verb: verb, APIGroup: "coordination.k8s.io", Resource: "leases",
		Namespace: lease.namespace, Name: lease.name, Code: code, Received: at(s), Completed: at(s + 0.01)}
}

func podEv(user, verb string, code int, s float64) controlplane.AuditEvent {
	return controlplane.AuditEvent{User: user, Verb: verb, Resource: "pods", Namespace: "compare", Code: code,
		Received: at(s), Completed: at(s + 0.01)}
}

// A hand-over as the audit log shows it: a holds the lease and creates
// pods; it is paused at 3 s; b, which only read the lease so far, takes it
// at 18 s and writes at 18.4 s; a resumes at 30 s and still creates two
// pods (one refused) and writes its status before it stops.
func handOverLog() []controlplane.AuditEvent {
	return []controlplane.AuditEvent{
		leaseEv("kcm-a", "create", 201, 0),
		leaseEv("kcm-b", "get", 200, 0.5),
		podEv("kcm-a", "create", 201, 1),
		podEv("kcm-a", "create", 201, 2.9),
		leaseEv("kcm-a", "update", 200, 2),
		leaseEv("kcm-b", "get", 200, 2.5),
		leaseEv("kcm-b", "update", 409, 17), // lost a race: no take
		leaseEv("kcm-b", "update", 200, 18),
		podEv("kcm-b", "create", 201, 18.6), // completes first, arrived later
		podEv("kcm-b", "create", 201, 18.4),
		podEv("kcm-b", "delete", 200, 31),
		podEv("kcm-a", "create", 201, 30.1),
		podEv("kcm-a", "create", 403, 30.2),
		{User: "kcm-a", Verb: "update", Resource: "replicasets", Subresource: "status", Code: 200, Received: at(30.3)},
		{User: "kcm-a", Verb: "create", Resource: "events", Code: 201, Received: at(30.4)}, // not a write to the workload
		leaseEv("kcm-a", "update", 409, 30.5),
	}
}

func TestLeaseHolder(t *testing.T) {
	evs := handOverLog()
	assert.Equal(t, "kcm-a", leaseHolder(evs[:6], lease), "before the hand-over")
	assert.Equal(t, "kcm-b", leaseHolder(evs, lease), "a refused write takes nothing")
	assert.Equal(t, "", leaseHolder(evs, leaseRef{"kube-system", "other"}))
	assert.True(t, touchedLease(evs[:2], lease, "kcm-b"), "a reader of the lease is in the election")
	assert.False(t, touchedLease(evs[:1], lease, "kcm-b"))
}

func TestHandOverTimes(t *testing.T) {
	evs := handOverLog()
	paused := at(3)
	took, ok := leaseTaken(evs, lease, "kcm-b", paused)
	assert.True(t, ok)
	assert.Equal(t, at(18), took, "the 409 at 17 s is no take")
	w, ok := firstWrite(evs, "kcm-b", paused)
	assert.True(t, ok)
	assert.Equal(t, at(18.4), w, "the earliest arrival, not the first in the log")
	assert.Equal(t, 15400*time.Millisecond, w.Sub(paused))
	_, ok = firstWrite(evs, "kcm-b", at(40))
	assert.False(t, ok, "no write after 40 s")
}

func TestWritesAfterResume(t *testing.T) {
	evs := handOverLog()
	writes, creates := writesAfter(evs, "kcm-a", at(30))
	assert.Equal(t, 3, writes, "two pod creates (one refused) and a status update; not the event, not the lease")
	assert.Equal(t, 1, creates)
	writes, creates = writesAfter(evs, "kcm-a", at(31))
	assert.Zero(t, writes)
	assert.Zero(t, creates)
}

func TestPauseSchedule(t *testing.T) {
	s := pauseSchedule{paused: at(3), floor: 25 * time.Second}
	for _, tc := range []struct {
		name                  string
		now                   float64
		otherHolds, converged bool
		want                  bool
	}{
		{"too early", 27.9, true, true, false},
		{"at the floor", 28, true, true, true},
		{"the other has not taken the lease", 60, false, true, false},
		{"not converged", 60, true, false, false},
		{"later", 60, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, s.resume(at(tc.now), tc.otherHolds, tc.converged))
		})
	}
}
