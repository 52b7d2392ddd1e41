package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Hooks are optional notifications for metrics, called by
// [Manager.ManageReplicas] (and so by the manage step of [Controller.Sync])
// synchronously in the caller's goroutine, after the
// PodControl calls of the call have returned and before ManageReplicas
// returns. A nil field is skipped; the zero Hooks calls nothing. Hooks must
// not call back into the Manager for the same owner. Expectation-side events
// (satisfied, expired, resolved by evidence, pending age) are reported by the
// expectations Tracker's own hooks.
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
