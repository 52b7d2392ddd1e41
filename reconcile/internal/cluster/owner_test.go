package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

func TestReplicaSetAndControllerRef(t *testing.T) {
	labels := map[string]string{"app": "web"}
	rs := cluster.NewReplicaSet("ns", "web", 3, labels)
	labels["app"] = "changed"
	assert.Equal(t, "web", rs.Spec.Template.Labels["app"], "labels are copied")
	assert.Equal(t, "web", rs.Spec.Selector.MatchLabels["app"])
	require.NotNil(t, rs.Spec.Replicas)
	assert.EqualValues(t, 3, *rs.Spec.Replicas)

	p := &corev1.Pod{}
	assert.Nil(t, cluster.ControllerOf(p))
	no := false
	p.OwnerReferences = []metav1.OwnerReference{{Name: "not-controller", Controller: &no}, cluster.ControllerRef(rs)}
	ref := cluster.ControllerOf(p)
	require.NotNil(t, ref)
	assert.Equal(t, rs.UID, ref.UID)
	assert.Equal(t, "ReplicaSet", ref.Kind)
	assert.True(t, *ref.BlockOwnerDeletion)
}
