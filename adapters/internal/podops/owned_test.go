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

// Issue 40: one Owned holds the stamp and the selectors derived from it;
// Admits says whether a pod cache's label selector keeps pods carrying
// only the stamp.
func TestOwned(t *testing.T) {
	zero, err := podops.NewOwned(nil, false)
	require.NoError(t, err)
	assert.Equal(t, podops.Owned{}, zero, "no stamp, no dropFinished: the zero Owned")
	ls, fs := zero.ListSelectors()
	assert.Empty(t, ls)
	assert.Empty(t, fs)
	assert.True(t, zero.Admits(nil))
	assert.True(t, zero.Admits(labels.Everything()))
	assert.True(t, zero.Admits(labels.SelectorFromSet(nil)))
	team, err := labels.Parse("team=a")
	require.NoError(t, err)
	assert.False(t, zero.Admits(team), "no stamp meets a selector that needs a label")
	notCanary, err := labels.Parse("!canary")
	require.NoError(t, err)
	assert.True(t, zero.Admits(notCanary))

	in := map[string]string{"example.com/managed-by": "podset"}
	owned, err := podops.NewOwned(in, true)
	require.NoError(t, err)
	in["example.com/managed-by"] = "changed"
	assert.Equal(t, map[string]string{"example.com/managed-by": "podset"}, owned.Stamp, "a copy")
	ls, fs = owned.ListSelectors()
	assert.Equal(t, "example.com/managed-by=podset", ls)
	assert.Equal(t, "status.phase!=Succeeded,status.phase!=Failed", fs)
	assert.True(t, owned.Admits(owned.Label))
	assert.True(t, owned.Admits(notCanary))
	assert.False(t, owned.Admits(team))
	for _, s := range []string{"example.com/managed-by!=podset", "!example.com/managed-by", "example.com/managed-by notin (podset)", "example.com/managed-by=other"} {
		sel, err := labels.Parse(s)
		require.NoError(t, err)
		assert.False(t, owned.Admits(sel), s)
	}
	assert.False(t, owned.Admits(labels.Nothing()))

	finished, err := podops.NewOwned(nil, true)
	require.NoError(t, err)
	assert.Nil(t, finished.Stamp)
	ls, fs = finished.ListSelectors()
	assert.Empty(t, ls)
	assert.Equal(t, "status.phase!=Succeeded,status.phase!=Failed", fs)

	_, err = podops.NewOwned(map[string]string{"bad key!": "v"}, false)
	assert.Error(t, err)
}
