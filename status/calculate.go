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

// Calculate returns the status a ReplicaSet should have after a sync (R-8.1
// to ): rs.Status with the counts of [Count] over the non-nil pods of
// active (taken as given, as upstream) and terminating at now, and the
// ReplicaFailure condition added for manageErr (reason [FailedCreate],
// [FailedDelete] or "" as there are fewer, more or as many active pods as
// desired; message manageErr.Error()) or removed when manageErr is nil.
// TerminatingReplicas is a new pointer, nil with
// opts.DisableTerminatingReplicas. ObservedGeneration and the
// other fields are copied from rs.Status unchanged (R-8.5; see [ForWrite]).
// As in [SetReplicaFailure], an error with a method ConditionReason()
// string in manageErr's tree names the reason (the reconcile package's
// errors do), and a long message is summarized.
//
// Differences from upstream: a new condition's LastTransitionTime is now,
// not the wall clock; the result shares no memory with rs (upstream's
// keeps rs.Status.Conditions' array when the conditions do not change);
// a nil rs is an empty ReplicaSet and a nil Spec.Replicas counts as 1,
// where upstream dereferences them; an error naming its reason gives
// that reason; and beyond upstream, messages over 4096 bytes are
// summarized (as [SetReplicaFailure] says); upstream writes them whole,
// which a metav1.Condition cannot hold. It never modifies rs and allocates
// independently of the number of pods; details:
// docs/design/status-rules.md.
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
