package status

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the failure condition. They are untyped so they serve both
// appsv1.ReplicaSetConditionType and metav1.Condition's string fields.
const (
	// ReplicaFailure is the condition type set while creating or deleting
	// pods fails.
	ReplicaFailure = "ReplicaFailure"
	// FailedCreate is the condition reason when there were fewer pods than
	// desired.
	FailedCreate = "FailedCreate"
	// FailedDelete is the condition reason when there were more pods than
	// desired.
	FailedDelete = "FailedDelete"
	// ReconcileError is the reason [SetReplicaFailure] uses when the pod
	// count already matched the desired count. Upstream leaves the reason
	// empty in that case, which metav1.Condition validation rejects.
	ReconcileError = "ReconcileError"
	// InvalidSpec is the reason when the owner's spec fails validation
	// (reconcile.Owner.Validate): nothing was created or deleted.
	InvalidSpec = "InvalidSpec"
	// CreatedPodsNotSelected is the reason when pods the controller created
	// do not match the owner's selector as the API server returned them (a
	// stamp the selector excludes, a mutating webhook rewriting labels):
	// the controller stopped creating pods.
	CreatedPodsNotSelected = "CreatedPodsNotSelected"
	// CreatedPodsNotObserved is the reason when pods the controller created
	// never appear in its pod cache (a cache filter the created pods do
	// not meet): the controller stopped creating pods.
	CreatedPodsNotObserved = "CreatedPodsNotObserved"
)

// failureReason returns upstream's reason for a new ReplicaFailure condition
// given the pods found and the pods desired: "" when they match.
func failureReason(have, want int32) string {
	switch {
	case have < want:
		return FailedCreate
	case have > want:
		return FailedDelete
	default:
		return ""
	}
}

// replicaSetConditions applies to an apps/v1 condition list. It never
// returns old itself: unchanged lists are copied and keep their nil or empty
// form; removing the last condition yields nil.
func replicaSetConditions(old []appsv1.ReplicaSetCondition, manageErr error, reason string, now time.Time) []appsv1.ReplicaSetCondition {
	// Upstream's "had" is the first match; any match means the same here.
	kept := 0
	for i := range old {
		if old[i].Type != ReplicaFailure {
			kept++
		}
	}
	had := kept < len(old)
	switch {
	case manageErr != nil && !had:
		out := make([]appsv1.ReplicaSetCondition, len(old), len(old)+1)
		copy(out, old)
		return append(out, appsv1.ReplicaSetCondition{
			Type:               ReplicaFailure,
			Status:             corev1.ConditionTrue,
			Reason:             conditionReason(manageErr, reason),
			Message:            conditionMessage(manageErr),
			LastTransitionTime: metav1.NewTime(now),
		})
	case manageErr == nil && had:
		if kept == 0 {
			return nil
		}
		out := make([]appsv1.ReplicaSetCondition, 0, kept)
		for i := range old {
			if old[i].Type != ReplicaFailure {
				out = append(out, old[i])
			}
		}
		return out
	default:
		// The condition's fields are all values, so a shallow clone is a deep copy.
		return slices.Clone(old)
	}
}

// SetReplicaFailure applies the ReplicaFailure rules of to the
// metav1.Condition list of a custom resource and reports whether it
// changed: with manageErr and no ReplicaFailure condition, one is appended
// (Status True, Message manageErr.Error(), ObservedGeneration generation,
// LastTransitionTime now, Reason [FailedCreate], [FailedDelete] or
// [ReconcileError] as diff, pods found minus desired, is negative, positive
// or zero); an existing one is kept untouched while manageErr is set;
// without manageErr every ReplicaFailure condition is removed (out is nil
// when none remains). Other conditions keep their order, and an unchanged
// list keeps its nil or empty form. It never modifies conds; out shares no
// memory with it.
//
// An error that names its reason gives it: when the first error of
// manageErr's tree (as [errors.As] walks it, through %w wrapping and
// [errors.Join]) with a method ConditionReason() string returns a valid
// condition reason (a letter, then letters, digits, '_', ',' or ':', not
// ending in ',' or ':'; at most 1024 bytes), that is the reason, whatever
// diff; otherwise the reason is chosen by diff as above. The reconcile
// package's errors do this, naming [InvalidSpec],
// [CreatedPodsNotSelected] or [CreatedPodsNotObserved].
//
// Beyond upstream: messages over 4096 bytes are summarized; upstream
// writes them whole, which a metav1.Condition cannot hold (32,768 bytes
// at most), so the API server would refuse the status write. A joined
// error (the first one of manageErr's %w chain with Unwrap() []error)
// of more than three errors becomes the text before its first error, the
// first three errors' texts separated by "; " and " … and N more errors";
// any message still over 4096 bytes is cut on a rune boundary and ends
// with " … (truncated)". Messages of at most 4096 bytes are verbatim.
// Details and the other difference from upstream (the reason at
// diff == 0): docs/design/status-rules.md.
func SetReplicaFailure(conds []metav1.Condition, manageErr error, diff int, generation int64, now time.Time) (out []metav1.Condition, changed bool) {
	had := meta.FindStatusCondition(conds, ReplicaFailure) != nil
	switch {
	case manageErr != nil && !had:
		reason := ReconcileError
		if diff < 0 {
			reason = FailedCreate
		} else if diff > 0 {
			reason = FailedDelete
		}
		out = make([]metav1.Condition, len(conds), len(conds)+1)
		copy(out, conds)
		// Appended directly: meta.SetStatusCondition would stamp time.Now()
		// over a zero now, and the type is known to be absent.
		return append(out, metav1.Condition{
			Type:               ReplicaFailure,
			Status:             metav1.ConditionTrue,
			ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
			Reason:             conditionReason(manageErr, reason),
			Message:            conditionMessage(manageErr),
		}), true
	case manageErr == nil && had:
		// RemoveStatusCondition builds a new slice and leaves conds' backing
		// array alone.
		out = conds
		meta.RemoveStatusCondition(&out, ReplicaFailure)
		if len(out) == 0 {
			out = nil
		}
		return out, true
	default:
		return slices.Clone(conds), false
	}
}
