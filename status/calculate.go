package status

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Options tunes [Calculate]. The zero value reproduces upstream Kubernetes
// v1.37 for a ReplicaSet: terminating replicas are reported. Options is a
// plain value and safe to share.
type Options struct {
	// DisableTerminatingReplicas leaves Status.TerminatingReplicas nil, as
	// upstream does when the DeploymentReplicaSetTerminatingReplicas gate or
	// the controller's EnableStatusTerminatingReplicas switch is off (R-1.8,
	// ), e.g. for a ReplicationController-like owner.
	DisableTerminatingReplicas bool
}

// Calculate returns the status a ReplicaSet should have after a sync (R-8.1–
// rs.Status with the counts of [Count] over active and terminating at
// now, and the ReplicaFailure condition updated for manageErr.
//
//   - Replicas, FullyLabeledReplicas, ReadyReplicas and AvailableReplicas
//     count the non-nil pods of active as given; like upstream,
//     Calculate does not check that they are active. Template labels and
//     minReadySeconds come from rs.Spec.
//   - TerminatingReplicas points to a new int32 holding the number of non-nil
//     pods in terminating, which may be 0, unless
//     opts.DisableTerminatingReplicas, in which case it is nil.
//   - ReplicaFailure: with manageErr != nil and no such condition, one
//     is appended with Status True, Message manageErr.Error(),
//     LastTransitionTime now and Reason [FailedCreate], [FailedDelete] or ""
//     as the number of active pods is below, above or equal to
//     Spec.Replicas. An existing one is kept untouched while manageErr !=
//     nil. With manageErr == nil every ReplicaFailure condition is removed,
//     and Conditions becomes nil if none remain. Other conditions keep their
//     order; an unchanged list keeps its nil or empty form.
//   - ObservedGeneration and any other field are copied from rs.Status
//     unchanged; see [ForWrite].
//
// Deviations from upstream: the new condition's LastTransitionTime is now,
// not the wall clock, and rs is never modified; the result shares no memory
// with rs. A nil rs is treated as an empty ReplicaSet and a nil
// Spec.Replicas as 1 (the API default).
//
// Calculate allocates at most the TerminatingReplicas pointer and the
// condition slice (and, for a template of more than 16 labels, the list of
// labels to match), independently of the number of pods.
func Calculate(rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error, now time.Time, opts Options) appsv1.ReplicaSetStatus {
	var empty appsv1.ReplicaSet
	if rs == nil {
		rs = &empty
	}
	c := Count(active, terminating, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, now)

	st := rs.Status // every reference field is replaced below
	st.Replicas = c.Replicas
	st.FullyLabeledReplicas = c.FullyLabeled
	st.ReadyReplicas = c.Ready
	st.AvailableReplicas = c.Available
	st.TerminatingReplicas = nil
	if !opts.DisableTerminatingReplicas {
		n := c.Terminating
		st.TerminatingReplicas = &n
	}
	st.Conditions = replicaSetConditions(rs.Status.Conditions, manageErr,
		failureReason(c.Replicas, desiredReplicas(rs)), now)
	return st
}

// desiredReplicas reads Spec.Replicas with the API default of 1 for nil.
func desiredReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}
