package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Hooks are optional notifications for metrics and events: every
// notification of a [Controller] is here (Config.Hooks), the manage step's,
// the expectations' and the consistency gate's. A nil field is skipped; the
// zero Hooks calls nothing. The manage step's hooks (CreateBatch,
// CreationsSkipped, DeletionVictim, Panicked) are called by
// [Manager.ManageReplicas] (and so by the manage step of [Controller.Sync])
// synchronously in the caller's goroutine, after the PodControl calls of
// the call have returned and before ManageReplicas returns; the others
// only by a Controller, from Sync's goroutines. Hooks must not call back
// into the Manager or the Controller for the same owner, and must be safe
// for concurrent use when several workers sync.
type Hooks struct {
	// CreateBatch is called once per slow-start batch that ran, in order,
	// with the batch's size (upstream has no such metric; its log line
	// reports only the skipped count).
	CreateBatch func(ownerKey string, size int)
	// CreationsSkipped is called when creations were lowered in the
	// expectations: failed creates, and creates never attempted after a
	// failing batch (together upstream's "skipped", R-9.2 step 5). It is
	// not called when every expected create happened.
	CreationsSkipped func(ownerKey string, failed, notAttempted int)
	// DeletionVictim is called once per chosen victim, in rank order,
	// including victims refused as not owned.
	DeletionVictim func(ownerKey string, v Victim)
	// Panicked is called when a PodControl call panicked, after the
	// expectations were corrected for every call that did not succeed and
	// just before the panic is raised again on the goroutine that called
	// the Manager, with its value unchanged. It receives that value and the
	// stack of the goroutine that panicked, which the re-raised panic no
	// longer shows: log it there. When several calls panicked, it sees the
	// first in call order, the one re-raised.
	Panicked func(ownerKey string, value any, stack []byte)
	// CreationsStopped is called by [Controller.Sync] when it stops
	// creating pods for an owner because pods it created did not become
	// the owner's (the creation breaker opened, R-13.7), once per opening,
	// with the failure condition's reason (status.CreatedPodsNotSelected
	// or status.CreatedPodsNotObserved) and message. Beyond upstream: an
	// event and a metric to alert on, since the owner needs a person (the
	// adapters record a Warning event on the owner with the reason).
	CreationsStopped func(ownerKey, reason, message string)
	// ExpectationsResolved is called once per round of expectations that
	// had something pending, when a sync finds the round no longer
	// blocking: how (expectations.Fulfilled, ResolvedByEvidence or
	// Expired) and how long it blocked (expectations.Hooks.Resolved of the
	// Controller's Tracker).
	ExpectationsResolved func(ownerKey string, how expectations.Resolution, pending time.Duration)
	// Deferred is called for every sync the consistency gate defers
	// (upstream's skip counter, R-10.9), with the resource whose cache is
	// behind the controller's own write.
	Deferred func(ownerKey string, err *expectations.StaleCacheError)
}

// stopped reports the opening of owner key's creation breaker.
func (h *Hooks) stopped(key string, err *stoppedError) {
	if h.CreationsStopped != nil && err != nil {
		h.CreationsStopped(key, err.ConditionReason(), err.Error())
	}
}

// Victim describes a pod chosen for deletion, for [Hooks.DeletionVictim].
type Victim struct {
	// Pod is the chosen pod (the caller's pointer; do not modify).
	Pod *corev1.Pod
	// Age is the time since the pod's creation at the Manager's clock
	// reading used for the ranking (negative for a creation time in the
	// future).
	Age time.Duration
	// AgeRatio is Age divided by the age of the youngest ready active pod:
	// upstream's "deletion age ratio" metric, which shows how well the
	// ranking spares old pods (a ratio near 1 means the newest pods go
	// first). It is set only when HasAgeRatio is true.
	AgeRatio float64
	// HasAgeRatio is true when the victim is ready and the youngest ready
	// active pod's age is positive. Upstream observes ready victims only and
	// divides whole milliseconds with integer division, which panics when
	// the youngest ready pod is less than a millisecond old; here
	// the division is in float64 and a non-positive denominator simply
	// yields no ratio.
	HasAgeRatio bool
}

func (h *Hooks) created(key string, out Outcome) {
	if h.CreateBatch != nil {
		for _, size := range out.Batches {
			h.CreateBatch(key, size)
		}
	}
	if h.CreationsSkipped != nil && out.CreateFailed+out.Skipped > 0 {
		h.CreationsSkipped(key, out.CreateFailed, out.Skipped)
	}
}

func (h *Hooks) deleted(key string, active, victims []*corev1.Pod, now time.Time) {
	if h.DeletionVictim == nil {
		return
	}
	for _, v := range victimAges(active, victims, now) {
		h.DeletionVictim(key, v)
	}
}

// victimAges computes each victim's age and its ratio to the age of the
// youngest ready pod among active (R-7.4, without the division by zero).
func victimAges(active, victims []*corev1.Pod, now time.Time) []Victim {
	var youngest time.Time
	for _, p := range active {
		if c := p.CreationTimestamp.Time; c.After(youngest) && podutil.IsReady(p) {
			youngest = c
		}
	}
	var base time.Duration
	if !youngest.IsZero() {
		base = now.Sub(youngest)
	}
	out := make([]Victim, len(victims))
	for i, p := range victims {
		v := Victim{Pod: p, Age: now.Sub(p.CreationTimestamp.Time)}
		if base > 0 && podutil.IsReady(p) {
			v.AgeRatio = float64(v.Age) / float64(base)
			v.HasAgeRatio = true
		}
		out[i] = v
	}
	return out
}
