package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

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
