package status

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Counts are the replica counts of for any owner of pods, a
// ReplicaSet or a custom resource. The zero Counts describes no pods. Counts
// is a plain value.
type Counts struct {
	Replicas     int32 // active pods
	FullyLabeled int32 // active pods carrying every template label
	Ready        int32 // active pods whose first Ready condition is True
	Available    int32 // ready pods ready for at least minReadySeconds
	Terminating  int32 // terminating pods
}

// Count computes [Counts] at now. Replicas, FullyLabeled,
// Ready and Available are taken over active only; Terminating is the number
// of pods in terminating.
//
// Like upstream, Count does not filter: every non-nil pod in active counts
// as active, and every non-nil pod in terminating as terminating, whatever
// their phase or deletion timestamp. Callers pass the filtered, claimed pods
// . Nil pods are skipped. An empty templateLabels matches every pod.
// A negative minReadySeconds is compared arithmetically.
//
// Count does not allocate for templates of up to 16 labels (a larger one
// costs an allocation per call, whatever the number of pods) and never
// modifies its arguments.
func Count(active, terminating []*corev1.Pod, templateLabels map[string]string, minReadySeconds int32, now time.Time) Counts {
	var c Counts
	var buf [16]podutil.Label // stack room for the template's labels
	want := podutil.AppendLabels(buf[:0], templateLabels)
	for _, p := range active {
		if p == nil {
			continue
		}
		c.Replicas++
		if podutil.HasLabels(p.Labels, want) {
			c.FullyLabeled++
		}
		// One scan of the conditions serves both readiness and availability.
		if rc := podutil.ReadyCondition(p); rc != nil && rc.Status == corev1.ConditionTrue {
			c.Ready++
			if podutil.AvailableAt(rc.LastTransitionTime.Time, minReadySeconds, now) {
				c.Available++
			}
		}
	}
	for _, p := range terminating {
		if p != nil {
			c.Terminating++
		}
	}
	return c
}
