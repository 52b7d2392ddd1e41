package status_test

import (
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/status"
)

// examplePod returns a pod labelled app=web that turned ready at readySince
// (or is not ready when readySince is zero).
func examplePod(name string, readySince time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}}}
	if !readySince.IsZero() {
		p.Status.Conditions = []corev1.PodCondition{{
			Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(readySince),
		}}
	}
	return p
}

// The apps/v1 path after a sync: calculate the status, skip the write when
// nothing changed, otherwise stamp the generation acted on, and requeue so
// the pod that is ready but not yet available gets counted.
func Example_replicaSet() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	replicas := int32(3)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        &replicas,
			MinReadySeconds: 10,
			Template:        corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}},
		},
		Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1},
	}
	active := []*corev1.Pod{
		examplePod("web-a", now.Add(-time.Minute)),   // available
		examplePod("web-b", now.Add(-4*time.Second)), // ready, available in 6s
	}
	manageErr := errors.New("exceeded quota")

	st := status.Calculate(rs, active, nil, manageErr, now, status.Options{})
	if status.NeedsUpdate(rs, st) {
		st = status.ForWrite(rs, st) // send a copy of rs with this status to UpdateStatus
	}
	fmt.Printf("replicas=%d labeled=%d ready=%d available=%d terminating=%d observedGeneration=%d\n",
		st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas,
		*st.TerminatingReplicas, st.ObservedGeneration)
	c := st.Conditions[0]
	fmt.Printf("%s %s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)

	// Only when both the manage step and the write succeeded; later is a
	// fresh clock reading.
	later := now.Add(time.Second)
	if d, ok := status.RequeueAfter(st.ReadyReplicas, st.AvailableReplicas, active, rs.Spec.MinReadySeconds, now, later); ok {
		fmt.Println("requeue after", d)
	}
	// Output:
	// replicas=2 labeled=2 ready=2 available=1 terminating=0 observedGeneration=2
	// ReplicaFailure True FailedCreate: exceeded quota
	// requeue after 5s
}

// The custom-resource path: counts for the CRD's own status fields and a
// metav1.Condition list that follows the same ReplicaFailure rules.
func Example_customResource() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	desired, generation := 3, int64(5)
	var conditions []metav1.Condition // the CRD's status.conditions
	active := []*corev1.Pod{examplePod("a", now.Add(-time.Minute)), examplePod("b", time.Time{})}
	terminating := []*corev1.Pod{examplePod("c", time.Time{})}

	c := status.Count(active, terminating, map[string]string{"app": "web"}, 0, now)
	fmt.Printf("%+v\n", c)

	conditions, changed := status.SetReplicaFailure(conditions, errors.New("create failed"),
		int(c.Replicas)-desired, generation, now)
	fmt.Println(changed, conditions[0].Type, conditions[0].Reason, conditions[0].ObservedGeneration)

	// The next successful sync clears it; no condition left means nil.
	conditions, changed = status.SetReplicaFailure(conditions, nil, 0, generation, now)
	fmt.Println(changed, conditions == nil)
	// Output:
	// {Replicas:2 FullyLabeled:2 Ready:1 Available:1 Terminating:1}
	// true ReplicaFailure FailedCreate 5
	// true true
}

// nil and a pointer to 0 differ (R-8.6), but two pointers to equal values do
// not.
func ExampleNeedsUpdate() {
	zero, alsoZero := int32(0), int32(0)
	rs := &appsv1.ReplicaSet{Status: appsv1.ReplicaSetStatus{TerminatingReplicas: &zero}}

	fmt.Println(status.NeedsUpdate(rs, appsv1.ReplicaSetStatus{TerminatingReplicas: &alsoZero}))
	fmt.Println(status.NeedsUpdate(rs, appsv1.ReplicaSetStatus{}))
	// Output:
	// false
	// true
}

// The earliest moment a ready pod becomes available, chosen with now.
func ExampleNextAvailabilityCheck() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	active := []*corev1.Pod{
		examplePod("a", now.Add(-2*time.Second)),
		examplePod("b", now.Add(-7*time.Second)),
	}
	at, ok := status.NextAvailabilityCheck(active, 10, now)
	fmt.Println(at.Sub(now), ok)
	// Output: 3s true
}
