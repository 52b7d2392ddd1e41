package status

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// NextAvailabilityCheck returns the earliest instant, after now, at which a
// pod of active that is ready but not yet available becomes available: the
// smallest readySince+minReadySeconds that lies strictly after now, over the
// non-nil pods whose first Ready condition is True with a non-zero
// LastTransitionTime. ok is false when there is none; callers then
// fall back to minReadySeconds (see [RequeueAfter]).
//
// As upstream, pods are used as given (not filtered for activity), ready
// pods without a transition time never produce a check, and a pod exactly
// at the boundary (readySince+minReadySeconds == now, already available by
// ) produces none either. With minReadySeconds <= 0 no pod waits for
// availability and ok is false. NextAvailabilityCheck does not allocate.
func NextAvailabilityCheck(active []*corev1.Pod, minReadySeconds int32, now time.Time) (at time.Time, ok bool) {
	if minReadySeconds <= 0 {
		return time.Time{}, false
	}
	wait := time.Duration(minReadySeconds) * time.Second
	for _, p := range active {
		since := podutil.ReadyTime(p) // zero for nil, unready or no LTT
		if since.IsZero() {
			continue
		}
		t := since.Add(wait)
		if t.After(now) && (!ok || t.Before(at)) {
			at, ok = t, true
		}
	}
	return at, ok
}

// RequeueAfter applies as a whole: whether the owner should be synced
// again so that ready pods are counted as available once minReadySeconds
// have passed, and after how long.
//
// ready and available are the counts of the status that was written (or
// that already matched, when the write was skipped): e.g.
// Status.ReadyReplicas and Status.AvailableReplicas of a ReplicaSet, or
// [Counts].Ready and [Counts].Available of a custom resource. now is the
// instant the status was calculated at and later a fresh clock reading.
//
// It returns ok false when minReadySeconds <= 0 or ready == available.
// Otherwise ok is true and the delay is [NextAvailabilityCheck]'s instant
// (chosen with now) minus later, clamped at 0; without such an instant it
// is minReadySeconds. Callers skip the requeue when the manage step or the
// status write failed, as upstream does.
func RequeueAfter(ready, available int32, active []*corev1.Pod, minReadySeconds int32, now, later time.Time) (time.Duration, bool) {
	if minReadySeconds <= 0 || ready == available {
		return 0, false
	}
	at, ok := NextAvailabilityCheck(active, minReadySeconds, now)
	if !ok {
		return time.Duration(minReadySeconds) * time.Second, true
	}
	return max(at.Sub(later), 0), true
}
