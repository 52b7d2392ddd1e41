package podops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// the stamp is added to a copy; the pod and its labels stay as
// they were; a conflicting template label is an error.
func TestStamp(t *testing.T) {
	stamp := map[string]string{"example.com/managed-by": "podset"}
	pod := realisticPod()
	want := pod.DeepCopy()

	got, err := podops.Stamp(pod, stamp)
	require.NoError(t, err)
	assert.Equal(t, want, pod, "the pod passed in is not modified")
	assert.Equal(t, map[string]string{"app": "web", "pod-template-hash": "7c9d8f6b5", "example.com/managed-by": "podset"}, got.Labels)
	got.Labels["x"] = "y"
	assert.NotContains(t, pod.Labels, "x", "the stamped pod has a label map of its own")

	same, err := podops.Stamp(pod, nil)
	require.NoError(t, err)
	assert.Same(t, pod, same, "no stamp: the pod itself")

	pod.Labels["example.com/managed-by"] = "podset"
	_, err = podops.Stamp(pod, stamp)
	assert.NoError(t, err, "the same value is no conflict")

	pod.Labels["example.com/managed-by"] = "other"
	_, err = podops.Stamp(pod, stamp)
	assert.ErrorContains(t, err, `example.com/managed-by="other"`)

	noLabels := &corev1.Pod{}
	got, err = podops.Stamp(noLabels, stamp)
	require.NoError(t, err)
	assert.Equal(t, stamp, got.Labels)
	assert.Nil(t, noLabels.Labels)
}

func TestSelectors(t *testing.T) {
	sel, fsel, err := podops.Selectors(nil, false)
	require.NoError(t, err)
	assert.True(t, sel.Empty())
	assert.True(t, fsel.Empty())

	sel, fsel, err = podops.Selectors(map[string]string{"example.com/managed-by": "podset"}, true)
	require.NoError(t, err)
	assert.Equal(t, "example.com/managed-by=podset", sel.String())
	assert.Equal(t, "status.phase!=Succeeded,status.phase!=Failed", fsel.String())
	for phase, kept := range map[corev1.PodPhase]bool{"": true, corev1.PodPending: true, corev1.PodRunning: true, corev1.PodUnknown: true, corev1.PodSucceeded: false, corev1.PodFailed: false} {
		assert.Equal(t, kept, fsel.Matches(fields.Set{"status.phase": string(phase)}), "phase %q", phase)
	}
	assert.True(t, sel.Matches(labels.Set{"example.com/managed-by": "podset", "app": "web"}))
	assert.False(t, sel.Matches(labels.Set{"app": "web"}))

	_, _, err = podops.Selectors(map[string]string{"bad key!": "v"}, false)
	assert.Error(t, err)
}
