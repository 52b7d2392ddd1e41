package election_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/examples/election"
)

// eventually polls cond every 50 ms for at most 30 s and reports whether it
// ever held: a bound on the wait, not a claim about speed.
func eventually(cond func() bool) bool {
	for range 600 {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// Flags.Health is wired to the elector Run starts: the /healthz check
// (client-go's HealthzAdaptor, as the replicaset example serves it) passes
// while the leader renews, and fails once a renewal hangs (the call never
// returns, so the elector neither renews nor gives up and still believes
// it leads) for longer than the lease duration plus the tolerance. The
// fence is closed by then, so the stuck leader writes nothing; the failing
// check is what lets the kubelet restart it.
func TestRunHealthFailsWhenRenewalHangs(t *testing.T) {
	const (
		lease     = 2 * time.Second
		renew     = 1500 * time.Millisecond
		retry     = 200 * time.Millisecond
		tolerance = 500 * time.Millisecond
	)
	client := fake.NewClientset()
	var hang atomic.Bool
	unhang := make(chan struct{})
	var unhangOnce sync.Once
	release := func() { unhangOnce.Do(func() { close(unhang) }) }
	t.Cleanup(release) // a failed assertion must not leave the call hung
	// The fake clientset holds its lock while a reactor runs, so a hung
	// update hangs every later call too: only the lease uses this client.
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if hang.Load() {
			<-unhang
		}
		return false, nil, nil // on to the object tracker
	})
	inner := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "rs"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "a"},
	}
	lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: lease, RenewDeadline: renew})
	require.NoError(t, err)
	health := leaderelection.NewLeaderHealthzAdaptor(tolerance)
	flags := &election.Flags{Enabled: true, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
		Namespace: "kube-system", Name: "rs", Identity: "a", Health: health}

	ctx, cancel := context.WithCancel(t.Context())
	leads := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- flags.Run(ctx, lock, func(ctx context.Context) error {
			close(leads)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	select {
	case <-leads:
	case err := <-done:
		t.Fatalf("Run returned before leading: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("never led in 30 s")
	}
	// Renewing every retry period: healthy, fence open.
	assert.NoError(t, health.Check(nil), "healthy while renewing")
	assert.NoError(t, lock.Fence(), "fence open while renewing")

	hang.Store(true)
	var checkErr error
	unhealthy := eventually(func() bool {
		checkErr = health.Check(nil)
		return checkErr != nil
	})
	require.True(t, unhealthy, "Check never failed in 30 s after renewals hung: is Flags.Health attached to Run's elector (HealthzAdaptor.SetLeaderElection)?")
	assert.ErrorContains(t, checkErr, "failed election to renew leadership on lease rs")
	assert.ErrorIs(t, lock.Fence(), fencing.ErrNotLeader, "the fence closed before the check failed")
	select {
	case err := <-done:
		t.Fatalf("Run returned while the renewal hung: %v", err)
	default: // still "leading": exactly the case only /healthz catches
	}

	// SIGTERM-like: cancel, then let the hung call return; Run releases
	// and returns nil.
	cancel()
	release()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return in 30 s after the renewal was let go")
	}
}
