package election_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/examples/election"
)

func parse(t *testing.T, args ...string) (*election.Flags, *flag.FlagSet, error) {
	t.Helper()
	var f election.Flags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.AddFlags(fs, "reconcilekit-replicaset")
	return &f, fs, fs.Parse(args)
}

// The flags are kube-controller-manager's, with its defaults.
func TestFlagsDefaults(t *testing.T) {
	f, fs, err := parse(t)
	require.NoError(t, err)
	for name, want := range map[string]string{
		"leader-elect":                    "false",
		"leader-elect-lease-duration":     "15s",
		"leader-elect-renew-deadline":     "10s",
		"leader-elect-retry-period":       "2s",
		"leader-elect-resource-namespace": "kube-system",
		"leader-elect-resource-name":      "reconcilekit-replicaset",
		"leader-elect-identity":           "",
	} {
		fl := fs.Lookup(name)
		require.NotNil(t, fl, name)
		assert.Equal(t, want, fl.DefValue, name)
	}
	require.NoError(t, f.Resolve(false))
	assert.False(t, f.Enabled, "off unless defaultOn")
	assert.Empty(t, f.Identity, "no identity when off")

	f, _, err = parse(t)
	require.NoError(t, err)
	require.NoError(t, f.Resolve(true))
	assert.True(t, f.Enabled, "defaultOn")
	assert.Contains(t, f.Identity, "_", "hostname_suffix")

	g, _, err := parse(t)
	require.NoError(t, err)
	require.NoError(t, g.Resolve(true))
	assert.NotEqual(t, f.Identity, g.Identity, "two replicas on one host differ")
}

func TestFlagsExplicit(t *testing.T) {
	f, _, err := parse(t, "-leader-elect=false")
	require.NoError(t, err)
	require.NoError(t, f.Resolve(true))
	assert.False(t, f.Enabled, "an explicit false wins over defaultOn")
	assert.True(t, f.Explicit())

	f, _, err = parse(t, "-leader-elect", "-leader-elect-identity=a")
	require.NoError(t, err)
	require.NoError(t, f.Resolve(false))
	assert.True(t, f.Enabled, "-leader-elect alone is true")
	assert.Equal(t, "a", f.Identity)

	for _, bad := range [][]string{
		{"-leader-elect", "-leader-elect-lease-duration=10s"},
		{"-leader-elect", "-leader-elect-retry-period=10s"},
		{"-leader-elect", "-leader-elect-resource-name="},
	} {
		f, _, err := parse(t, bad...)
		require.NoError(t, err)
		assert.Error(t, f.Resolve(false), strings.Join(bad, " "))
	}
	_, _, err = parse(t, "-leader-elect=maybe")
	assert.Error(t, err)
}

// Run leads, and returns lead's result once lead is done, with the lease
// released; cancelled while waiting, it returns nil having led nothing.
func TestRun(t *testing.T) {
	client := fake.NewClientset()
	newLock := func(id string) *fencing.Lock {
		inner := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "rs"},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
		lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second})
		require.NoError(t, err)
		return lock
	}
	flags := func(id string) *election.Flags {
		return &election.Flags{Enabled: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
			RetryPeriod: 2 * time.Second, Namespace: "kube-system", Name: "rs", Identity: id}
	}
	errDone := errors.New("done")
	a := newLock("a")
	var fenceWhileLeading error
	err := flags("a").Run(t.Context(), a, func(ctx context.Context) error {
		fenceWhileLeading = a.Fence()
		return errDone
	})
	assert.ErrorIs(t, err, errDone)
	assert.NoError(t, fenceWhileLeading, "the fence is open while leading")
	assert.ErrorIs(t, a.Fence(), fencing.ErrNotLeader, "closed after the release")
	lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "rs", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, lease.Spec.HolderIdentity, "released")

	// b takes the released lease at once; c waits behind b until cancelled.
	b := newLock("b")
	bLeads := make(chan struct{})
	bCtx, bCancel := context.WithCancel(t.Context())
	bDone := make(chan error, 1)
	go func() {
		bDone <- flags("b").Run(bCtx, b, func(ctx context.Context) error {
			close(bLeads)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	<-bLeads
	cCtx, cCancel := context.WithCancel(t.Context())
	cDone := make(chan error, 1)
	called := false
	go func() {
		cDone <- flags("c").Run(cCtx, newLock("c"), func(context.Context) error { called = true; return nil })
	}()
	cCancel()
	assert.NoError(t, <-cDone, "cancelled while waiting")
	assert.False(t, called, "c never led")
	bCancel()
	assert.NoError(t, <-bDone, "SIGTERM-like cancel: released, no error")
}
