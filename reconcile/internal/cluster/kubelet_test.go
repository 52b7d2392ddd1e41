package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

func TestKubelet(t *testing.T) {
	c := cluster.New(cluster.Options{GracefulDeletion: true, Nodes: 2})
	for _, n := range []string{"a", "b", "c"} {
		_, err := c.API.Create(named(n))
		require.NoError(t, err)
	}
	require.NoError(t, c.API.Delete("ns", "c"))
	readied, removed := c.Kubelet.Step()
	assert.Equal(t, 2, readied)
	assert.Equal(t, 1, removed)
	pods, _ := c.API.List()
	require.Len(t, pods, 2)
	assert.Equal(t, []string{"node-0", "node-1"}, []string{pods[0].Spec.NodeName, pods[1].Spec.NodeName})
	assert.Equal(t, corev1.PodRunning, pods[0].Status.Phase)
	readied, removed = c.Kubelet.Step()
	assert.Zero(t, readied+removed, "ready pods are left alone")
}

// A finished pod stays in the API, not Ready, and the kubelet leaves it
// alone: Never and OnFailure pods complete, the others fail.
func TestKubeletFinish(t *testing.T) {
	c := cluster.New(cluster.Options{})
	deadline := int64(30)
	for name, spec := range map[string]corev1.PodSpec{
		"always":   {},
		"never":    {RestartPolicy: corev1.RestartPolicyNever},
		"once":     {RestartPolicy: corev1.RestartPolicyOnFailure},
		"deadline": {RestartPolicy: corev1.RestartPolicyNever, ActiveDeadlineSeconds: &deadline},
	} {
		p := named(name)
		p.Spec = spec
		_, err := c.API.Create(p)
		require.NoError(t, err)
	}
	readied, _ := c.Kubelet.Step()
	require.Equal(t, 4, readied)
	for name, want := range map[string]corev1.PodPhase{
		"always": corev1.PodFailed, "never": corev1.PodSucceeded, "once": corev1.PodSucceeded, "deadline": corev1.PodFailed,
	} {
		phase, ok := c.Kubelet.Finish("ns", name)
		require.True(t, ok, name)
		assert.Equal(t, want, phase, name)
		p, _ := c.API.Get("ns", name)
		assert.Equal(t, want, p.Status.Phase, name)
		assert.False(t, podutil.IsReady(p), name)
	}
	_, ok := c.Kubelet.Finish("ns", "never")
	assert.False(t, ok, "finished already")
	_, ok = c.Kubelet.Finish("ns", "missing")
	assert.False(t, ok)
	readied, removed := c.Kubelet.Step()
	assert.Zero(t, readied+removed, "finished pods are not restarted")
	assert.Equal(t, 4, c.API.Len())
}
