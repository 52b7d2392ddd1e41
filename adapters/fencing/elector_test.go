package fencing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// With client-go's own elector over a fake clientset: the fence opens when
// the elector starts leading and is closed once it has released the lease
// on cancel (ReleaseOnCancel).
func TestLockWithLeaderElector(t *testing.T) {
	client := fake.NewClientset()
	inner := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "test"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "me"},
	}
	lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second})
	require.NoError(t, err)
	require.ErrorIs(t, lock.Fence(), fencing.ErrNotLeader)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	leading := make(chan error, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { leading <- lock.Fence() },
			OnStoppedLeading: func() {},
		},
	})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		elector.Run(ctx)
	}()
	select {
	case err := <-leading:
		assert.NoError(t, err, "the fence is open while leading")
	case <-time.After(30 * time.Second):
		t.Fatal("the elector did not lead within 30s")
	}
	cancel()
	<-done
	assert.ErrorIs(t, lock.Fence(), fencing.ErrNotLeader, "closed after the release")
	lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "test", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, lease.Spec.HolderIdentity, "released")
}
