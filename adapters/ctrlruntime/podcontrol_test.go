package ctrlruntime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// TestEventPerBatch: with EventPerBatch a scale-up records one
// SuccessfulCreate per slow-start batch (1, 2, 4, 3 for 10 pods), without
// it one per pod, as upstream.
func TestEventPerBatch(t *testing.T) {
	replicas := int32(10)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "uid-web"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	for _, c := range []struct {
		perBatch bool
		want     int
	}{{false, 10}, {true, 4}} {
		rec := record.NewFakeRecorder(100)
		pc := ctrlruntime.PodControl{Client: fake.NewClientBuilder().WithScheme(scheme(t)).Build(), Recorder: rec, EventPerBatch: c.perBatch}
		m := &reconcile.Manager{Pods: pc}
		out, err := m.ManageReplicas(t.Context(), reconcile.ReplicaSetOwner(rs), nil, nil)
		require.NoError(t, err)
		require.Len(t, out.Created, 10)
		close(rec.Events)
		var got []string
		for e := range rec.Events {
			got = append(got, e)
		}
		assert.Len(t, got, c.want, "EventPerBatch %v: %q", c.perBatch, got)
		if c.perBatch {
			assert.Regexp(t, `^Normal SuccessfulCreate Created pod: web-\w+$`, got[0])
			assert.Regexp(t, `^Normal SuccessfulCreate Created 3 pods: web-\w+, web-\w+, web-\w+$`, got[3])
		}
	}
}
