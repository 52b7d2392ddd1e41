package reconcile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

func TestReplicaSetOwner(t *testing.T) {
	rs := recRS(4)
	o := reconcile.ReplicaSetOwner(rs)
	assert.Equal(t, "default/web", o.Key)
	assert.Same(t, rs, o.Object)
	assert.Equal(t, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), o.Kind)
	assert.Equal(t, int32(4), o.Replicas)
	assert.Same(t, &rs.Spec.Template, o.Template)
	assert.Same(t, rs.Spec.Selector, o.Selector, "for claiming and orphan matching (R-10.5, R-11.1)")
	rs.Spec.MinReadySeconds = 7
	assert.Equal(t, int32(7), reconcile.ReplicaSetOwner(rs).MinReadySeconds)

	rs.Spec.Replicas = nil
	assert.Equal(t, int32(1), reconcile.ReplicaSetOwner(rs).Replicas, "nil Spec.Replicas is the API default 1")

	cluster := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	assert.Equal(t, "web", reconcile.ReplicaSetOwner(cluster).Key, "R-1.7: no namespace, just the name")

	assert.Equal(t, reconcile.Owner{Kind: appsv1.SchemeGroupVersion.WithKind("ReplicaSet")}, reconcile.ReplicaSetOwner(nil))
}

func TestKeys(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"R-1.7 pod key", reconcile.PodKey(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}), "ns/p"},
		{"R-1.7, R-12.9 pod key keeps the slash without namespace", reconcile.PodKey(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}), "/p"},
		{"nil pod", reconcile.PodKey(nil), ""},
		{"R-1.7 owner key", reconcile.OwnerKey("ns", "rs"), "ns/rs"},
		{"R-1.7 owner key without namespace", reconcile.OwnerKey("", "rs"), "rs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
}
