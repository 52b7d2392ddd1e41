package ctrlruntime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

var stamp = map[string]string{"example.com/managed-by": "podset"}

// PodControl.Labels are stamped on every created pod, never on the
// pod passed in; a template label with another value fails before any call.
func TestPodControlStampsLabels(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	rec := record.NewFakeRecorder(10)
	yes := true
	ref := []metav1.OwnerReference{{APIVersion: "demo/v1", Kind: "PodSet", Name: "web", UID: "u", Controller: &yes}}
	pc := ctrlruntime.PodControl{Client: c, Recorder: rec, Labels: stamp}

	in := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns, Labels: map[string]string{"app": "web"}, OwnerReferences: ref}}
	created, err := pc.CreatePod(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "web"}, in.Labels, "the caller's pod is not modified")
	assert.Equal(t, map[string]string{"app": "web", "example.com/managed-by": "podset"}, created.Labels)
	var stored corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(created), &stored))
	assert.Equal(t, created.Labels, stored.Labels)

	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns, Labels: map[string]string{"example.com/managed-by": "other"}, OwnerReferences: ref}}
	_, err = pc.CreatePod(t.Context(), bad)
	assert.ErrorContains(t, err, "ctrlruntime: CreatePod:")
	assert.True(t, apierrors.IsNotFound(c.Get(t.Context(), client.ObjectKeyFromObject(bad), &corev1.Pod{})), "no pod created")
	assert.Contains(t, <-rec.Events, "Normal SuccessfulCreate")
	assert.Contains(t, <-rec.Events, "Warning FailedCreate")
}

// OwnedPods gives the pod cache the stamp's label selector
// and, with dropFinished, a field selector leaving finished pods out; what
// it leaves unset falls back to the cache's defaults.
func TestOwnedPods(t *testing.T) {
	owned, err := ctrlruntime.OwnedPods(stamp, true)
	require.NoError(t, err)
	assert.Equal(t, "example.com/managed-by=podset", owned.Label.String())
	assert.True(t, owned.Label.Matches(labels.Set{"example.com/managed-by": "podset", "app": "web"}))
	assert.False(t, owned.Label.Matches(labels.Set{"app": "web"}), "an unlabeled orphan is never seen")
	for phase, kept := range map[corev1.PodPhase]bool{corev1.PodPending: true, corev1.PodRunning: true, corev1.PodSucceeded: false, corev1.PodFailed: false} {
		assert.Equal(t, kept, owned.Field.Matches(fields.Set{"status.phase": string(phase)}), "phase %s", phase)
	}
	assert.Nil(t, owned.Transform, "LeanPods is a separate choice")

	none, err := ctrlruntime.OwnedPods(nil, false)
	require.NoError(t, err)
	assert.Nil(t, none.Label, "the cache's DefaultLabelSelector applies")
	assert.Nil(t, none.Field, "the cache's DefaultFieldSelector applies")

	_, err = ctrlruntime.OwnedPods(map[string]string{"not a key": "v"}, false)
	assert.ErrorContains(t, err, "ctrlruntime: OwnedPods:")

	full := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns, Labels: stamp, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
	got, err := ctrlruntime.LeanPods(full)
	require.NoError(t, err)
	assert.Equal(t, reconcile.LeanPod(full), got)
}
