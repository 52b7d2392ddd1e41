package status

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
)

// NeedsUpdate reports whether newStatus must be written to rs, that is
// whether upstream's status write would call the API. It is false
// exactly when all of these hold:
//
//   - the replicas, fullyLabeledReplicas, readyReplicas and
//     availableReplicas of rs.Status equal newStatus's;
//   - terminatingReplicas are both nil or both non-nil with equal values
//     (nil differs from a pointer to 0; two different pointers to the same
//     value are equal);
//   - rs.Generation == rs.Status.ObservedGeneration;
//   - rs.Status.Conditions deep-equals newStatus.Conditions, where a nil list
//     differs from an empty one and transition times and messages count.
//
// newStatus.ObservedGeneration is not looked at. A nil rs is treated as an
// empty ReplicaSet. NeedsUpdate never modifies its arguments.
func NeedsUpdate(rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus) bool {
	var empty appsv1.ReplicaSet
	if rs == nil {
		rs = &empty
	}
	cur := &rs.Status
	return cur.Replicas != newStatus.Replicas ||
		cur.FullyLabeledReplicas != newStatus.FullyLabeledReplicas ||
		cur.ReadyReplicas != newStatus.ReadyReplicas ||
		cur.AvailableReplicas != newStatus.AvailableReplicas ||
		!equalCount(cur.TerminatingReplicas, newStatus.TerminatingReplicas) ||
		rs.Generation != cur.ObservedGeneration ||
		!reflect.DeepEqual(cur.Conditions, newStatus.Conditions)
}

// equalCount compares optional counts by value; nil equals only nil.
func equalCount(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ForWrite returns the status an UpdateStatus call should carry: a deep copy
// of newStatus whose ObservedGeneration is rs.Generation, the generation the
// sync acted on. Callers keep that value when they retry the write
// on a freshly read object, even if its generation is newer.
//
// Deviation from upstream: rs is not modified. Callers assign the result to
// the status of the object they send. The result shares no memory with rs or
// newStatus and keeps the nil or empty form of the conditions. A nil rs
// counts as generation 0.
func ForWrite(rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus) appsv1.ReplicaSetStatus {
	var out appsv1.ReplicaSetStatus
	newStatus.DeepCopyInto(&out)
	out.ObservedGeneration = 0
	if rs != nil {
		out.ObservedGeneration = rs.Generation
	}
	return out
}
