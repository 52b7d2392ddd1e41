package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

const leaseNS = "kube-system"

// NewCoordinator refuses options it cannot run with, each error prefixed
// with the package; zero fields take the documented defaults (seen here
// through the errors that name them: LeaseDuration 15 s, RenewDeadline
// 10 s, RetryPeriod 2 s).
func TestNewCoordinatorOptions(t *testing.T) {
	valid := sharding.Options{Namespace: leaseNS, Name: "rs", Identity: "a"}
	with := func(f func(*sharding.Options)) sharding.Options {
		o := valid
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name    string
		opts    sharding.Options
		wantErr string // "" for none
	}{
		{name: "defaults", opts: valid},
		{name: "short durations", opts: with(func(o *sharding.Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 2*time.Second, time.Second, 200*time.Millisecond
		})},
		{name: "256 shards", opts: with(func(o *sharding.Options) { o.Shards = 256 })},
		{name: "1 shard", opts: with(func(o *sharding.Options) { o.Shards = 1 })},
		{name: "dotted name", opts: with(func(o *sharding.Options) { o.Name = "rs.example" })},
		{name: "no Namespace", opts: with(func(o *sharding.Options) { o.Namespace = "" }), wantErr: "Options.Namespace is required"},
		{name: "no Identity", opts: with(func(o *sharding.Options) { o.Identity = "" }), wantErr: "Options.Identity is required"},
		{name: "no Name", opts: with(func(o *sharding.Options) { o.Name = "" }), wantErr: `Name ""`},
		{name: "Name not a label value", opts: with(func(o *sharding.Options) { o.Name = "a b" }), wantErr: `Name "a b"`},
		{name: "Name uppercase", opts: with(func(o *sharding.Options) { o.Name = "RS" }), wantErr: `Name "RS"`},
		{name: "Name not a DNS subdomain", opts: with(func(o *sharding.Options) { o.Name = "a_b" }), wantErr: `Name "a_b"`},
		{name: "RenewDeadline = LeaseDuration", opts: with(func(o *sharding.Options) {
			o.LeaseDuration, o.RenewDeadline = 10*time.Second, 10*time.Second
		}), wantErr: "RenewDeadline 10s must be below LeaseDuration 10s"},
		{name: "default RenewDeadline above LeaseDuration", opts: with(func(o *sharding.Options) { o.LeaseDuration = 5 * time.Second }),
			wantErr: "RenewDeadline 10s must be below LeaseDuration 5s"},
		{name: "RenewDeadline above default LeaseDuration", opts: with(func(o *sharding.Options) { o.RenewDeadline = 20 * time.Second }),
			wantErr: "RenewDeadline 20s must be below LeaseDuration 15s"},
		{name: "RetryPeriod = RenewDeadline", opts: with(func(o *sharding.Options) {
			o.RenewDeadline, o.RetryPeriod = 5*time.Second, 5*time.Second
		}), wantErr: "RetryPeriod 5s must be below RenewDeadline 5s"},
		{name: "default RetryPeriod above RenewDeadline", opts: with(func(o *sharding.Options) { o.RenewDeadline = time.Second }),
			wantErr: "RetryPeriod 2s must be below RenewDeadline 1s"},
		{name: "LeaseDuration not whole seconds", opts: with(func(o *sharding.Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 1500*time.Millisecond, time.Second, 200*time.Millisecond
		}), wantErr: "LeaseDuration 1.5s must be whole seconds"},
		{name: "negative duration", opts: with(func(o *sharding.Options) { o.RetryPeriod = -time.Second }), wantErr: "negative durations"},
		{name: "negative shards", opts: with(func(o *sharding.Options) { o.Shards = -1 }), wantErr: "-1 shards: want 1 to 256"},
		{name: "257 shards", opts: with(func(o *sharding.Options) { o.Shards = 257 }), wantErr: "257 shards: want 1 to 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := sharding.NewCoordinator(fake.NewClientset(), tc.opts)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, c)
				assert.Empty(t, c.Shards(), "it starts nothing")
				return
			}
			require.Error(t, err)
			assert.Nil(t, c)
			assert.True(t, strings.HasPrefix(err.Error(), "sharding: "), "prefixed: %v", err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
	t.Run("nil client", func(t *testing.T) {
		c, err := sharding.NewCoordinator(nil, valid)
		require.ErrorContains(t, err, "sharding: NewCoordinator: nil client")
		assert.Nil(t, c)
	})
	t.Run("nil RunFunc", func(t *testing.T) {
		c, err := sharding.NewCoordinator(fake.NewClientset(), valid)
		require.NoError(t, err)
		require.ErrorContains(t, c.Run(t.Context(), nil), "sharding: Coordinator.Run: nil RunFunc")
	})
}

// shortOptions are Options whose replica runs for a test: every round and
// renewal within RetryPeriod, 200 ms.
func shortOptions(identity string, shards int) sharding.Options {
	return sharding.Options{
		Namespace: leaseNS, Name: "rs", Identity: identity, Shards: shards,
		LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond,
	}
}

// replica is a Coordinator running in the test, and what its RunFuncs saw.
type replica struct {
	c      *sharding.Coordinator
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error         // Run's, once done is closed

	mu      sync.Mutex
	held    map[int]*sharding.Held
	stopped map[int]bool // the RunFunc's ctx was done
}

// runReplica runs a Coordinator of opts over client whose RunFunc records
// its Held, writes wrote(shard index) with h.Wrote and waits for its ctx.
func runReplica(t *testing.T, client kubernetes.Interface, opts sharding.Options, wrote func(i int) string) *replica {
	t.Helper()
	c, err := sharding.NewCoordinator(client, opts)
	require.NoError(t, err)
	// The Coordinator logs through the test, shown when it fails.
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), testr.New(t)))
	r := &replica{c: c, cancel: cancel, done: make(chan struct{}), held: map[int]*sharding.Held{}, stopped: map[int]bool{}}
	go func() {
		defer close(r.done)
		r.err = c.Run(ctx, func(ctx context.Context, h *sharding.Held) error {
			i := h.Shard().Index
			h.Wrote(wrote(i))
			r.mu.Lock()
			r.held[i] = h
			r.mu.Unlock()
			<-ctx.Done()
			r.mu.Lock()
			r.stopped[i] = true
			r.mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return r
}

// helds returns the Helds the RunFuncs got, by shard index.
func (r *replica) helds() map[int]*sharding.Held {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int]*sharding.Held, len(r.held))
	for i, h := range r.held {
		out[i] = h
	}
	return out
}

// stop cancels Run's ctx and waits, bounded, for Run to return.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		require.NoError(t, r.err)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "Run did not return within 10 s of its ctx's end")
	}
}

func leases(t *testing.T, client kubernetes.Interface) map[string]coordinationv1.Lease {
	t.Helper()
	list, err := client.CoordinationV1().Leases(leaseNS).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]coordinationv1.Lease{}
	for _, l := range list.Items {
		out[l.Name] = l
	}
	return out
}

func holder(l coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func shardLeaseNames(group string, k int) []string {
	out := make([]string, k)
	for i := range k {
		out[i] = fmt.Sprintf("%s-shard-%d-of-%d", group, i, k)
	}
	return out
}

// One replica over client-go's fake clientset takes all 4 shards, runs
// one RunFunc per shard with an open fence, and on its ctx's end stops
// them, gives every shard back with the versions they recorded and
// deletes its own Lease; a replica started afterwards resumes each shard
// from what the first recorded.
//
// The fake clientset does not enforce resourceVersion preconditions (its
// Updates and Deletes succeed whatever the version): this test shows the
// protocol's happy path and the Leases it leaves; the conflicts between
// replicas are the model test's (model_test.go).
func TestCoordinatorRunsAndHandsOver(t *testing.T) {
	const k = 4
	client := fake.NewClientset()
	wrote := func(i int) string { return fmt.Sprint(1000 + i) }
	first := runReplica(t, client, shortOptions("a", k), wrote)

	require.Eventually(t, func() bool { return len(first.helds()) == k }, 5*time.Second, 10*time.Millisecond, "the RunFunc gets every shard")
	helds := first.helds()
	for i := range k {
		h := helds[i]
		require.NotNil(t, h, "shard %d", i)
		assert.Equal(t, sharding.Shard{Index: i, Count: k}, h.Shard())
		assert.NoError(t, h.Fence(), "the fence is open while the shard is held")
		assert.Empty(t, h.Resume(), "the shard's first holder")
	}
	assert.Equal(t, []sharding.Shard{{Index: 0, Count: k}, {Index: 1, Count: k}, {Index: 2, Count: k}, {Index: 3, Count: k}}, first.c.Shards())
	var replicaLease string
	require.Eventually(t, func() bool {
		ls := leases(t, client)
		for _, name := range shardLeaseNames("rs", k) {
			if holder(ls[name]) != "a" {
				return false
			}
		}
		replicaLease = ""
		for name, l := range ls {
			if strings.HasPrefix(name, "rs-replica-") && holder(l) == "a" {
				replicaLease = name
			}
		}
		return len(ls) == k+1 && replicaLease != ""
	}, 5*time.Second, 10*time.Millisecond, "a Lease per shard and one for the replica")
	for name, l := range leases(t, client) {
		assert.Equal(t, "rs", l.Labels[sharding.GroupLabel], "Lease %s carries the group", name)
		assert.EqualValues(t, 2, *l.Spec.LeaseDurationSeconds)
	}

	first.stop(t)
	first.mu.Lock()
	assert.Len(t, first.stopped, k, "every RunFunc's ctx was done before Run returned")
	first.mu.Unlock()
	for i, h := range helds {
		assert.ErrorIs(t, h.Fence(), sharding.ErrNotHeld, "shard %d given back: its fence is closed", i)
	}
	assert.Empty(t, first.c.Shards())
	ls := leases(t, client)
	assert.NotContains(t, ls, replicaLease, "the replica's Lease is deleted")
	for i, name := range shardLeaseNames("rs", k) {
		require.Contains(t, ls, name)
		assert.Empty(t, holder(ls[name]), "%s has no holder", name)
		assert.Equal(t, wrote(i), ls[name].Annotations[sharding.WrittenAnnotation], "%s records its holder's last write", name)
	}

	// The next holder resumes from the previous holder's last write.
	second := runReplica(t, client, shortOptions("b", k), func(int) string { return "" })
	require.Eventually(t, func() bool { return len(second.helds()) == k }, 5*time.Second, 10*time.Millisecond)
	for i, h := range second.helds() {
		assert.Equal(t, wrote(i), h.Resume(), "shard %d", i)
		assert.NoError(t, h.Fence())
	}
	second.stop(t)
	for i, name := range shardLeaseNames("rs", k) {
		assert.Equal(t, wrote(i), leases(t, client)[name].Annotations[sharding.WrittenAnnotation], "kept by a holder that wrote nothing")
	}
}

// Options.Shards 0 means DefaultShards: a lone replica takes all 16.
func TestCoordinatorDefaultShards(t *testing.T) {
	client := fake.NewClientset()
	r := runReplica(t, client, shortOptions("a", 0), func(int) string { return "" })
	require.Eventually(t, func() bool { return len(r.helds()) == sharding.DefaultShards }, 5*time.Second, 10*time.Millisecond)
	var names []string
	for name := range leases(t, client) {
		if strings.Contains(name, "-shard-") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	want := shardLeaseNames("rs", sharding.DefaultShards)
	slices.Sort(want)
	assert.Equal(t, want, names)
	r.stop(t)
}

// A renewal that starts on time but takes longer than RenewDeadline (a
// client throttled behind pod writes, a slow API server) closes the
// shard's fence; the shard is not lost, and the next renewal that is on
// time opens the fence again. The Coordinator says so in its log.
func TestCoordinatorFenceReopensAfterALateRenewal(t *testing.T) {
	client := fake.NewClientset()
	var slow atomic.Bool
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if slow.Load() && strings.Contains(action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).Name, "-shard-") {
			time.Sleep(1500 * time.Millisecond) // > RenewDeadline (1 s), < LeaseDuration (2 s)
		}
		return false, nil, nil
	})
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	c, err := sharding.NewCoordinator(client, shortOptions("a", 1))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))
	helds := make(chan *sharding.Held, 2)
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(ctx context.Context, h *sharding.Held) error {
			helds <- h
			<-ctx.Done()
			return nil
		})
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	}()
	var h *sharding.Held
	select {
	case h = <-helds:
	case <-time.After(10 * time.Second):
		t.Fatal("the shard was not taken")
	}
	require.NoError(t, h.Fence())

	slow.Store(true)
	require.Eventually(t, func() bool { return errors.Is(h.Fence(), sharding.ErrNotHeld) }, 10*time.Second, 10*time.Millisecond,
		"a renewal that takes longer than RenewDeadline closes the fence")
	slow.Store(false)
	require.Eventually(t, func() bool { return h.Fence() == nil }, 10*time.Second, 10*time.Millisecond,
		"the next renewal on time opens it again")
	assert.Equal(t, []sharding.Shard{{Index: 0, Count: 1}}, c.Shards(), "the shard was never lost")
	select {
	case again := <-helds:
		t.Fatalf("the RunFunc was started again for %v: the shard was lost and retaken", again.Shard())
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	assert.True(t, slices.ContainsFunc(lines, func(l string) bool {
		return strings.Contains(l, "Renewed a shard's Lease after its fence had closed")
	}), "the late renewal is logged: %q", lines)
}

// During a change of K, the replicas of the old K keep every one of its
// shards held between them: a replica of the new K holds nothing while an
// old shard is held, so it is not counted in their fair share (counting it
// left K/N of the old shards without a holder). Once the last replica of
// the old K stops, the new K's shards are all taken.
func TestCoordinatorChangeOfK(t *testing.T) {
	client := versioned(fake.NewClientset())
	none := func(int) string { return "" }
	old := runReplica(t, client, shortOptions("old", 4), none)
	require.Eventually(t, func() bool { return len(old.c.Shards()) == 4 }, 5*time.Second, 10*time.Millisecond)

	next := runReplica(t, client, shortOptions("next", 2), none)
	require.Eventually(t, func() bool {
		for _, l := range leases(t, client) {
			if holder(l) == "next" && l.Annotations["sharding.reconcilekit.io/shards"] == "2" {
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "the replica of the new K announces itself, with its K")
	// Two lease durations: time enough for the old replica to have given
	// shards back, had it counted the new one.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		require.Len(t, old.c.Shards(), 4, "the old K's replica keeps all its shards")
		require.Empty(t, next.c.Shards(), "the new K's replica holds nothing while an old shard is held")
		time.Sleep(50 * time.Millisecond)
	}

	old.stop(t)
	require.Eventually(t, func() bool { return len(next.c.Shards()) == 2 }, 10*time.Second, 10*time.Millisecond,
		"the last replica of the old K gave its shards back: the new K's are taken")
	ls := leases(t, client)
	for _, name := range shardLeaseNames("rs", 4) {
		assert.Empty(t, holder(ls[name]), "%s: given back", name)
	}
}

// versioned makes client's Lease writes carry a new resourceVersion each,
// as kube-apiserver's do (the fake's tracker leaves it empty, so that a
// watching replica would see every other replica's Leases unchanged, and
// expired after their lease duration, however often they are renewed).
func versioned(client *fake.Clientset) *fake.Clientset {
	var rv atomic.Int64
	stamp := func(action k8stesting.Action) (bool, runtime.Object, error) {
		if l, ok := action.(interface{ GetObject() runtime.Object }).GetObject().(*coordinationv1.Lease); ok {
			l.ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		}
		return false, nil, nil
	}
	client.PrependReactor("create", "leases", stamp)
	client.PrependReactor("update", "leases", stamp)
	return client
}

// Stopping gives each shard back as soon as its controller has returned,
// and each give-back has RenewDeadline of its own: a controller slower to
// stop than RenewDeadline neither holds the other shards back nor makes
// their give-backs fail (which left their Leases to expire: 17.9 s instead
// of a hand-over in a rolling change of K at 1000 × 10).
func TestStopGivesBackEachShardOnceItsControllerReturned(t *testing.T) {
	client := fake.NewClientset()
	var mu sync.Mutex
	returned := map[int]time.Time{}
	givenBack := map[string]time.Time{}
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if l := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease); holder(*l) == "" {
			mu.Lock()
			givenBack[l.Name] = time.Now()
			mu.Unlock()
		}
		return false, nil, nil
	})
	versioned(client)
	opts := shortOptions("a", 4) // RenewDeadline 1 s, LeaseDuration 2 s
	c, err := sharding.NewCoordinator(client, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), testr.New(t)))
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(ctx context.Context, h *sharding.Held) error {
			<-ctx.Done()
			if h.Shard().Index == 0 {
				time.Sleep(1500 * time.Millisecond) // slower to stop than RenewDeadline
			}
			mu.Lock()
			returned[h.Shard().Index] = time.Now()
			mu.Unlock()
			return nil
		})
	}()
	require.Eventually(t, func() bool { return len(c.Shards()) == 4 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	ls := leases(t, client)
	mu.Lock()
	defer mu.Unlock()
	for i, name := range shardLeaseNames("rs", 4) {
		assert.Empty(t, holder(ls[name]), "%s: given back, not left to expire", name)
		if i > 0 {
			assert.True(t, givenBack[name].Before(returned[0]), "%s: given back before shard 0's slow controller returned", name)
		}
	}
}
