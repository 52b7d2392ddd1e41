package consumer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func replicaSet(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

func pods(t *testing.T, client kubernetes.Interface) []*corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return podrank.Pointers(list.Items)
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	slices.Sort(out)
	return out
}

// TestScaleUpAndDown creates pods through the fake clientset, writes the
// status, then scales down and checks that the pods podrank ranks first are
// the ones deleted.
func TestScaleUpAndDown(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet(3)
	client := fake.NewClientset(rs)
	m := &reconcile.Manager{Pods: &Pods{Client: client}}

	out, err := Sync(ctx, client, m, rs, now)
	require.NoError(t, err)
	assert.Equal(t, -3, out.Diff)
	assert.Len(t, out.Created, 3)
	created := pods(t, client)
	require.Len(t, created, 3)
	for _, p := range created {
		ref := metav1.GetControllerOf(p)
		require.NotNil(t, ref, "pod %s has a controller ref", p.Name)
		assert.Equal(t, rs.UID, ref.UID)
		assert.Equal(t, "ReplicaSet", ref.Kind)
	}
	got, err := client.AppsV1().ReplicaSets("ns").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(3), got.Status.Replicas)
	require.NotNil(t, got.Status.TerminatingReplicas, "the v0.33 field is written")
	assert.Equal(t, int32(0), *got.Status.TerminatingReplicas)
	assert.Equal(t, int64(1), got.Status.ObservedGeneration)

	// Make two pods cheaper to delete: podrank must pick exactly those.
	for _, p := range created[:2] {
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-5"}
		_, err := client.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	current := pods(t, client)
	want := podrank.ForDeletion(current, nil, 2, podrank.Options{Now: now})
	assert.Equal(t, names(created[:2]), names(want))

	got.Spec.Replicas = ptr(int32(1))
	out, err = Sync(ctx, client, m, got, now)
	require.NoError(t, err)
	assert.Equal(t, 2, out.Diff)
	assert.Equal(t, names(want), names(out.Deleted))
	assert.Equal(t, names(created[2:]), names(pods(t, client)))
}

func ptr[T any](v T) *T { return &v }
