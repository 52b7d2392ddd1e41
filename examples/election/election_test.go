package election_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

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

// logLines is a logger that sends each message it logs on a channel, with
// its key-value pairs, dropping what no one reads in time.
func logLines(lines chan<- string) logr.Logger {
	return funcr.New(func(prefix, args string) {
		select {
		case lines <- args:
		default:
		}
	}, funcr.Options{})
}

// fakeLeases is the fake clientset's lease client, which says, as the fake
// clientset does, that it cannot stream a watch list, so that informers
// list and then watch.
type fakeLeases struct {
	coordinationv1client.LeasesGetter
}

func (fakeLeases) IsWatchListSemanticsUnSupported() bool { return true }

// A standby that watches the Lease takes it as soon as the leader releases
// it, not at its next retry. The retry period here is a minute, so without
// the watch the standby could not lead before the test's bounded wait ends
// (its next try is at least a minute after its first); no assertion is
// about speed.
func TestRunTakesReleasedLeaseAtOnce(t *testing.T) {
	const (
		lease = 3 * time.Minute
		renew = 2 * time.Minute
		retry = time.Minute
		wait  = 20 * time.Second // bounded wait, well under retry
	)
	client := fake.NewClientset()
	newLock := func(id string) *fencing.Lock {
		inner := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "rs"},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
		lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: lease, RenewDeadline: renew})
		require.NoError(t, err)
		return lock
	}
	flags := func(id string) *election.Flags {
		return &election.Flags{Enabled: true, LeaseDuration: lease, RenewDeadline: renew,
			RetryPeriod: retry, Namespace: "kube-system", Name: "rs", Identity: id,
			Leases: fakeLeases{client.CoordinationV1()}}
	}
	leadUntilDone := func(leads chan<- struct{}) func(context.Context) error {
		return func(ctx context.Context) error {
			close(leads)
			<-ctx.Done()
			return ctx.Err()
		}
	}

	aLeads := make(chan struct{})
	aCtx, aCancel := context.WithCancel(t.Context())
	aDone := make(chan error, 1)
	go func() { aDone <- flags("a").Run(aCtx, newLock("a"), leadUntilDone(aLeads)) }()
	<-aLeads

	bLines := make(chan string, 100)
	bCtx, bCancel := context.WithCancel(klog.NewContext(t.Context(), logLines(bLines)))
	defer bCancel()
	b := newLock("b")
	bLeads := make(chan struct{})
	bDone := make(chan error, 1)
	go func() { bDone <- flags("b").Run(bCtx, b, leadUntilDone(bLeads)) }()
	// b has tried once and seen a lead: its next try is a minute away.
	timeout := time.After(wait)
	for seen := false; !seen; {
		select {
		case line := <-bLines:
			seen = strings.Contains(line, `"leader election: new leader observed"`) && strings.Contains(line, `"leader"="a"`)
		case <-timeout:
			t.Fatal("b never saw a lead")
		}
	}
	assert.ErrorIs(t, b.Fence(), fencing.ErrNotLeader, "b waits")

	aCancel() // SIGTERM: a releases the lease
	require.NoError(t, <-aDone)
	select {
	case <-bLeads:
	case <-timeout:
		for len(bLines) > 0 {
			t.Log(<-bLines)
		}
		t.Fatalf("b did not lead within %v of starting, with a retry period of %v: the release was not acted on", wait, retry)
	}
	assert.NoError(t, b.Fence(), "b leads, its fence open")
	got, err := client.CoordinationV1().Leases("kube-system").Get(t.Context(), "rs", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, got.Spec.HolderIdentity)
	assert.Equal(t, "b", *got.Spec.HolderIdentity)
	var logged bool
	for len(bLines) > 0 {
		line := <-bLines
		if strings.Contains(line, `"leader election: lease released, trying now"`) {
			logged = true
		}
	}
	assert.True(t, logged, "b logged the release it acted on")

	bCancel()
	assert.NoError(t, <-bDone, "b released on cancel")
}
