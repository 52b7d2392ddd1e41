package fencing_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

var errAPI = errors.New("api unavailable")

// fakeLock is a resourcelock.Interface whose writes succeed unless err is
// set; during (a call's "latency") runs inside each write, between its
// start and its end. It stores the last record written. It does not model
// resource versions or conflicts.
type fakeLock struct {
	id     string
	mu     sync.Mutex
	err    error
	during func()
	rec    *resourcelock.LeaderElectionRecord
	events []string
}

func (f *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, nil, f.err
	}
	if f.rec == nil {
		return nil, nil, errors.New("not found")
	}
	r := *f.rec
	return &r, []byte(r.HolderIdentity), nil
}

func (f *fakeLock) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return f.Update(ctx, rec)
}

func (f *fakeLock) Update(_ context.Context, rec resourcelock.LeaderElectionRecord) error {
	if f.during != nil {
		f.during()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.rec = &rec
	return nil
}

func (f *fakeLock) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakeLock) RecordEvent(s string) { f.events = append(f.events, s) }
func (f *fakeLock) Identity() string     { return f.id }
func (f *fakeLock) Describe() string     { return "kube-system/test" }

func record(holder string) resourcelock.LeaderElectionRecord {
	return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: 15}
}

func newLock(t *testing.T) (*fencing.Lock, *fakeLock, *clocktesting.FakePassiveClock) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(time.Unix(1_000_000, 0))
	inner := &fakeLock{id: "me"}
	l, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, Clock: clk})
	require.NoError(t, err)
	return l, inner, clk
}

func TestLockFence(t *testing.T) {
	ctx := context.Background()
	t.Run("closed before the first acquisition", func(t *testing.T) {
		l, _, _ := newLock(t)
		err := l.Fence()
		assert.ErrorIs(t, err, fencing.ErrNotLeader)
		assert.ErrorContains(t, err, "not acquired yet")
		assert.False(t, l.MayWrite())
	})
	t.Run("open after Create, closes exactly RenewDeadline after the renewal started", func(t *testing.T) {
		l, _, clk := newLock(t)
		require.NoError(t, l.Create(ctx, record("me")))
		assert.NoError(t, l.Fence())
		clk.SetTime(clk.Now().Add(10*time.Second - time.Nanosecond))
		assert.NoError(t, l.Fence(), "1ns before the deadline")
		clk.SetTime(clk.Now().Add(time.Nanosecond))
		err := l.Fence()
		assert.ErrorIs(t, err, fencing.ErrNotLeader, "at the deadline")
		assert.ErrorContains(t, err, "10s ago")
	})
	t.Run("measured from the start of the request, not its end", func(t *testing.T) {
		l, inner, clk := newLock(t)
		inner.during = func() { clk.SetTime(clk.Now().Add(4 * time.Second)) } // a slow renewal
		require.NoError(t, l.Update(ctx, record("me")))
		clk.SetTime(clk.Now().Add(6*time.Second - time.Nanosecond))
		assert.NoError(t, l.Fence())
		clk.SetTime(clk.Now().Add(time.Nanosecond))
		assert.ErrorIs(t, l.Fence(), fencing.ErrNotLeader, "10s after the start, 6s after the answer")
	})
	t.Run("each successful renewal moves the deadline; failed ones do not", func(t *testing.T) {
		l, inner, clk := newLock(t)
		require.NoError(t, l.Update(ctx, record("me")))
		clk.SetTime(clk.Now().Add(2 * time.Second))
		require.NoError(t, l.Update(ctx, record("me")))
		clk.SetTime(clk.Now().Add(9 * time.Second)) // 11s after the first, 9s after the second
		assert.NoError(t, l.Fence())
		inner.setErr(errAPI)
		assert.Error(t, l.Update(ctx, record("me")))
		clk.SetTime(clk.Now().Add(time.Second))
		assert.ErrorIs(t, l.Fence(), fencing.ErrNotLeader, "the failed renewal did not extend it")
		inner.setErr(nil)
		require.NoError(t, l.Update(ctx, record("me")))
		assert.NoError(t, l.Fence(), "renewed again: open")
	})
	t.Run("a read showing another holder closes it at once", func(t *testing.T) {
		l, inner, _ := newLock(t)
		require.NoError(t, l.Update(ctx, record("me")))
		other := record("other")
		inner.rec = &other
		_, _, err := l.Get(ctx)
		require.NoError(t, err)
		err = l.Fence()
		assert.ErrorIs(t, err, fencing.ErrNotLeader)
		assert.ErrorContains(t, err, `held by "other"`)
	})
	t.Run("a read showing this replica leaves it open", func(t *testing.T) {
		l, _, _ := newLock(t)
		require.NoError(t, l.Update(ctx, record("me")))
		_, _, err := l.Get(ctx)
		require.NoError(t, err)
		assert.NoError(t, l.Fence())
	})
	t.Run("the release closes it before the release is sent", func(t *testing.T) {
		l, inner, _ := newLock(t)
		require.NoError(t, l.Update(ctx, record("me")))
		var during error
		inner.during = func() { during = l.Fence() }
		require.NoError(t, l.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}))
		assert.ErrorIs(t, during, fencing.ErrNotLeader, "closed while the release was in flight")
		assert.ErrorContains(t, l.Fence(), "released")
	})
	t.Run("a record promising a shorter lease shortens the window", func(t *testing.T) {
		l, _, clk := newLock(t)
		rec := record("me")
		rec.LeaseDurationSeconds = 12 // 12s − margin 5s = 7s
		require.NoError(t, l.Update(ctx, rec))
		clk.SetTime(clk.Now().Add(7 * time.Second))
		assert.ErrorIs(t, l.Fence(), fencing.ErrNotLeader)
	})
	t.Run("the lock methods pass through", func(t *testing.T) {
		l, inner, _ := newLock(t)
		l.RecordEvent("became leader")
		assert.Equal(t, []string{"became leader"}, inner.events)
		assert.Equal(t, "me", l.Identity())
		assert.Equal(t, "kube-system/test", l.Describe())
	})
}

func TestNewLockRejects(t *testing.T) {
	inner := &fakeLock{id: "me"}
	for _, tc := range []struct {
		name  string
		inner resourcelock.Interface
		opts  fencing.Options
	}{
		{"nil lock", nil, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second}},
		{"no lease duration", inner, fencing.Options{RenewDeadline: 10 * time.Second}},
		{"no renew deadline", inner, fencing.Options{LeaseDuration: 15 * time.Second}},
		{"renew deadline = lease duration", inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 15 * time.Second}},
	} {
		_, err := fencing.NewLock(tc.inner, tc.opts)
		assert.ErrorContains(t, err, "fencing: NewLock", tc.name)
	}
	l, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second})
	require.NoError(t, err, "nil Clock: real time")
	assert.False(t, l.MayWrite())
}

// Fence may be asked by many workers while the elector renews.
func TestLockConcurrent(t *testing.T) {
	l, _, clk := newLock(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				_ = l.Fence()
			}
		})
	}
	for range 50 {
		require.NoError(t, l.Update(context.Background(), record("me")))
		clk.SetTime(clk.Now().Add(time.Millisecond))
	}
	wg.Wait()
	assert.NoError(t, l.Fence())
}
