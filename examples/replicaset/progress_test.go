package main

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func runningPod(uid string, readyFor time.Duration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
			Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-readyFor)),
		}}},
	}
}

// The explanation names the ranking step (docs/rules.md §6, podrank.Explain)
// that puts the victim before the kept pod.
func TestReason(t *testing.T) {
	kept := runningPod("k", time.Hour)
	unscheduled := runningPod("a", time.Hour)
	unscheduled.Spec.NodeName = ""
	pending := runningPod("b", time.Hour)
	pending.Status.Phase = corev1.PodPending
	notReady := runningPod("c", time.Hour)
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	cheap := runningPod("d", time.Hour)
	cheap.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-5"}
	fresh := runningPod("e", time.Second)
	sameBucket := runningPod("f", time.Hour-time.Second)

	for name, tc := range map[string]struct {
		victim *corev1.Pod
		want   string
	}{
		"R-6.1 unscheduled":    {unscheduled, "unscheduled"},
		"R-6.2 phase":          {pending, "earlier phase"},
		"R-6.3 readiness":      {notReady, "not ready"},
		"R-6.4 deletion cost":  {cheap, "lower deletion cost"},
		"R-6.6 newer bucket":   {fresh, "ready more recently"},
		"R-6.6 same bucket":    {sameBucket, "ready more recently"},
		"R-6.8 tied otherwise": {runningPod("g", time.Hour), "tie"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, reason(tc.victim, kept, now))
		})
	}
}

func TestExplainVictims(t *testing.T) {
	a, b, c := runningPod("a", time.Second), runningPod("b", 2*time.Second), runningPod("c", time.Hour)
	assert.Equal(t, "2 ready more recently", explainVictims([]*corev1.Pod{a, b}, []*corev1.Pod{a, b, c}, now))
	assert.Equal(t, "every active pod goes", explainVictims([]*corev1.Pod{a}, []*corev1.Pod{a}, now))
}

func TestShortError(t *testing.T) {
	assert.Equal(t, "boom (+1 more)", shortError(errors.New("Internal error occurred: boom\nbang")))
	assert.Len(t, shortError(errors.New(string(make([]byte, 200)))), 50)
}
