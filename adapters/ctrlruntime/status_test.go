package ctrlruntime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
)

// StatusWriter is Status().Update: it returns the server's answer (a new
// resourceVersion, for the gate, R-10.9) and a conflict unchanged (no
// retry: the reconcile is retried).
func TestStatusWriter(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rs).WithStatusSubresource(rs).Build()
	cached := &appsv1.ReplicaSet{}
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(rs), cached))
	next := cached.DeepCopy()
	next.Status.Replicas = 3
	got, err := ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{Client: c}.WriteStatus(t.Context(), next)
	require.NoError(t, err)
	assert.Equal(t, int32(3), got.Status.Replicas)
	assert.NotEqual(t, cached.ResourceVersion, got.ResourceVersion, "the server's new version")

	updates := 0
	conflict := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rs).WithStatusSubresource(rs).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			updates++
			return apierrors.NewConflict(appsv1.Resource("replicasets"), "web", nil)
		}}).Build()
	got, err = ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{Client: conflict}.WriteStatus(t.Context(), next)
	assert.True(t, apierrors.IsConflict(err))
	assert.Nil(t, got)
	assert.Equal(t, 1, updates, "no retry")

	_, err = ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{}.WriteStatus(t.Context(), next)
	assert.ErrorContains(t, err, "ctrlruntime: StatusWriter: nil Client")
}
