package podops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// an owner whose creations stopped gets a Warning event with the
// condition's reason, after the hook it already had.
func TestStoppedEvents(t *testing.T) {
	rec := record.NewFakeRecorder(4)
	var calls []string
	prev := reconcile.Hooks{CreationsStopped: func(key, reason, _ string) { calls = append(calls, key+" "+reason) }}
	h := podops.StoppedEvents(prev, rec, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	h.CreationsStopped("default/web", "CreatedPodsNotObserved", "stopped creating pods")
	assert.Equal(t, []string{"default/web CreatedPodsNotObserved"}, calls)
	assert.Equal(t, "Warning CreatedPodsNotObserved stopped creating pods", <-rec.Events)

	same := podops.StoppedEvents(prev, nil, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	assert.NotNil(t, same.CreationsStopped, "no recorder: the hooks as they were")
}
