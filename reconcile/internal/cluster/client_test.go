package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// podControl is reconcile.PodControl, restated so this package's tests do
// not import reconcile.
type podControl interface {
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	DeletePod(ctx context.Context, pod *corev1.Pod) error
}

var _ podControl = (*cluster.Client)(nil)

func TestClientFaults(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		fault     cluster.Fault
		check     func(t *testing.T, err error)
		stored    int
		wantStats cluster.Stats
	}{
		{
			name: "none", fault: cluster.NoFault, stored: 1,
			check:     func(t *testing.T, err error) { assert.NoError(t, err) },
			wantStats: cluster.Stats{Creates: 1, Created: 1},
		},
		{
			name: "fail before: nothing is written", fault: cluster.FailBefore, stored: 0,
			check:     func(t *testing.T, err error) { assert.True(t, apierrors.IsServiceUnavailable(err)) },
			wantStats: cluster.Stats{Creates: 1, CreateFailed: 1},
		},
		{
			name: "lost response: written, but the caller sees a timeout", fault: cluster.LoseResponse, stored: 1,
			check:     func(t *testing.T, err error) { assert.True(t, apierrors.IsTimeout(err)) },
			wantStats: cluster.Stats{Creates: 1, Created: 1, CreateLost: 1},
		},
		{
			name: "namespace terminating", fault: cluster.NamespaceTerminating, stored: 0,
			check: func(t *testing.T, err error) {
				assert.True(t, apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause))
			},
			wantStats: cluster.Stats{Creates: 1, NamespaceTerminating: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster.New(cluster.Options{})
			c.Client.Faults.Create = func(int, *corev1.Pod) cluster.Fault { return tc.fault }
			p, err := c.Client.CreatePod(ctx, generated("a-"))
			tc.check(t, err)
			if err != nil {
				assert.Nil(t, p)
			}
			assert.Equal(t, tc.stored, c.API.Len())
			assert.Equal(t, tc.wantStats, c.Client.Stats())
		})
	}
}

func TestClientDelete(t *testing.T) {
	ctx := context.Background()
	c := cluster.New(cluster.Options{})
	p, err := c.Client.CreatePod(ctx, named("a"))
	require.NoError(t, err)
	_, err = c.Client.CreatePod(ctx, named("a"))
	assert.True(t, apierrors.IsAlreadyExists(err))

	c.Client.Faults.Delete = func(call int, _ *corev1.Pod) cluster.Fault {
		return []cluster.Fault{cluster.FailBefore, cluster.LoseResponse}[min(call, 1)]
	}
	assert.True(t, apierrors.IsServiceUnavailable(c.Client.DeletePod(ctx, p)))
	assert.Equal(t, 1, c.API.Len())
	assert.True(t, apierrors.IsTimeout(c.Client.DeletePod(ctx, p)))
	assert.Zero(t, c.API.Len())
	assert.True(t, apierrors.IsNotFound(c.Client.DeletePod(ctx, p)))
	assert.Equal(t, cluster.Stats{
		Creates: 2, Created: 1, AlreadyExists: 1,
		Deletes: 3, Deleted: 1, DeleteFailed: 1, DeleteLost: 1, NotFound: 1,
	}, c.Client.Stats())
}
