package main

import (
	"time"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// The bookkeeping of a hand-over between two replicas of a controller,
// from kube-apiserver's audit log (controlplane.AuditEvent): each replica
// is a user of its own, so the log tells who wrote what when. These
// functions are pure: the audit events and the moments of the driver's
// signals in, durations and counts out.

// leaseRef names the Lease the replicas of a contender compete for.
type leaseRef struct{ namespace, name string }

// leaseWrite reports whether e is a successful write of the Lease l: a
// replica taking, renewing or releasing it. A replica waiting for the lease
// only reads it (client-go's elector writes only when it holds the lease
// or when the lease has expired), so the last writer holds it, unless
// that write released it.
func leaseWrite(e controlplane.AuditEvent, l leaseRef) bool {
	return e.Resource == "leases" && e.Subresource == "" && e.Namespace == l.namespace && e.Name == l.name &&
		(e.Verb == "create" || e.Verb == "update" || e.Verb == "patch") && e.Code >= 200 && e.Code < 300
}

// leaseHolder is the user of the last successful write of the Lease in
// evs (in the log's order), or "" when there is none. Call it while no
// replica has released the lease (a release is a write too).
func leaseHolder(evs []controlplane.AuditEvent, l leaseRef) string {
	for i := len(evs) - 1; i >= 0; i-- {
		if leaseWrite(evs[i], l) {
			return evs[i].User
		}
	}
	return ""
}

// leaseTaken is when user first wrote the Lease successfully at or after
// from (the request's arrival): for a replica that did not hold it, the
// moment it took it.
func leaseTaken(evs []controlplane.AuditEvent, l leaseRef, user string, from time.Time) (time.Time, bool) {
	return first(evs, from, func(e controlplane.AuditEvent) bool { return e.User == user && leaseWrite(e, l) })
}

// touchedLease reports whether user has made any request of the Lease (a
// replica waiting for it reads it every retry period).
func touchedLease(evs []controlplane.AuditEvent, l leaseRef, user string) bool {
	for _, e := range evs {
		if e.User == user && e.Resource == "leases" && e.Namespace == l.namespace && e.Name == l.name {
			return true
		}
	}
	return false
}

// firstWrite is when user's first write to pods or ReplicaSets arrived at
// or after from, whatever its answer: the first thing a new leader does to
// the workload.
func firstWrite(evs []controlplane.AuditEvent, user string, from time.Time) (time.Time, bool) {
	return first(evs, from, func(e controlplane.AuditEvent) bool { return e.User == user && e.Write() })
}

// first is the earliest arrival at or after from of an event that matches;
// the log is in the order of completion, which is not quite that of
// arrival, so every event is looked at.
func first(evs []controlplane.AuditEvent, from time.Time, match func(controlplane.AuditEvent) bool) (time.Time, bool) {
	var at time.Time
	found := false
	for _, e := range evs {
		if e.Received.Before(from) || !match(e) {
			continue
		}
		if !found || e.Received.Before(at) {
			at, found = e.Received, true
		}
	}
	return at, found
}

// writesAfter counts user's writes to pods and ReplicaSets that arrived at
// or after from, whatever their answer, and among them the pod creates
// kube-apiserver accepted.
func writesAfter(evs []controlplane.AuditEvent, user string, from time.Time) (writes, creates int) {
	for _, e := range evs {
		if e.User != user || e.Received.Before(from) || !e.Write() {
			continue
		}
		writes++
		if podCreated(e) {
			creates++
		}
	}
	return writes, creates
}

func podCreated(e controlplane.AuditEvent) bool {
	return e.Verb == "create" && e.Resource == "pods" && e.Subresource == "" && e.Code == 201
}

// pauseSchedule decides when a paused leader is resumed (-fault
// leader-pause): once the other replica has taken the lease and the
// workload has converged under it, and no earlier than floor after the
// pause, so that the paused replica's lease has expired well before it
// resumes (a pause longer than any renew deadline: the case where the old
// leader cannot know it is old).
type pauseSchedule struct {
	paused time.Time
	floor  time.Duration
}

// resume reports whether the paused leader is to be resumed at now.
func (s pauseSchedule) resume(now time.Time, otherHolds, converged bool) bool {
	return otherHolds && converged && now.Sub(s.paused) >= s.floor
}
