package election

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// An elector Run has stopped never acquires, and one that acquired is never
// stopped: the two exclude each other.
func TestAttemptRetire(t *testing.T) {
	client := fake.NewClientset()
	inner := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "rs"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "b"},
	}
	lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second})
	require.NoError(t, err)
	rec := resourcelock.LeaderElectionRecord{HolderIdentity: "b", LeaseDurationSeconds: 15}

	retired := &attempt{Lock: lock}
	require.True(t, retired.retire(), "not acquired: retired")
	assert.ErrorIs(t, retired.Create(t.Context(), rec), errRetired)
	assert.ErrorIs(t, retired.Update(t.Context(), rec), errRetired)
	assert.False(t, retired.won())
	leases, err := client.CoordinationV1().Leases("kube-system").List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, leases.Items, "a retired attempt wrote nothing")
	assert.ErrorIs(t, lock.Fence(), fencing.ErrNotLeader, "the shared fence stays closed")

	fresh := &attempt{Lock: lock}
	require.NoError(t, fresh.Create(t.Context(), rec))
	assert.True(t, fresh.won())
	assert.False(t, fresh.retire(), "acquired: not retired")
	assert.NoError(t, fresh.Update(t.Context(), rec), "it keeps renewing")
	assert.NoError(t, lock.Fence(), "the shared fence is open for the winner")
}
