package expectations_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

const rsKey = "default/web"

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTracker returns a Tracker with a fake clock at epoch and the given TTL.
func newTracker(ttl time.Duration) (*expectations.Tracker, *fakeclock.Clock) {
	clk := fakeclock.New(epoch)
	// A zero Gate (no caches): the tests that record writes see them as
	// round evidence in Snapshots.
	return expectations.New(expectations.Options{TTL: ttl, Clock: clk, Gate: new(expectations.Gate)}), clk
}

// outcome is what a table case expects to observe about rsKey.
type outcome struct {
	adds, dels int
	ok         bool     // Pending's ok
	satisfied  bool     // Satisfied
	delKeys    []string // pending deletion keys in the Snapshot
}

// assertCounters checks rsKey's Pending counters and Satisfied.
func assertCounters(t *testing.T, tr *expectations.Tracker, adds, dels int, ok, satisfied bool) {
	t.Helper()
	gotAdds, gotDels, gotOK := tr.Pending(rsKey)
	assert.Equal(t, adds, gotAdds, "adds")
	assert.Equal(t, dels, gotDels, "dels")
	assert.Equal(t, ok, gotOK, "ok")
	assert.Equal(t, satisfied, tr.Satisfied(rsKey), "Satisfied")
}

// newTrackerWith returns a Tracker with opts and a fake clock at epoch.
// opts.Gate nil means a zero Gate.
func newTrackerWith(opts expectations.Options) (*expectations.Tracker, *fakeclock.Clock) {
	clk := fakeclock.New(epoch)
	opts.Clock = clk
	if opts.Gate == nil {
		opts.Gate = new(expectations.Gate)
	}
	return expectations.New(opts), clk
}

type step func(tr *expectations.Tracker, clk *fakeclock.Clock)

func set(adds, dels int) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.Set(rsKey, adds, dels) }
}
func expectCreations(n int) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.ExpectCreations(rsKey, n) }
}
func expectDeletions(podKeys ...string) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.ExpectDeletions(rsKey, podKeys) }
}
func creationObserved() step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.CreationObserved(rsKey) }
}
func deletionObserved(podKey string) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.DeletionObserved(rsKey, podKey) }
}
func raise(adds, dels int) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.Raise(rsKey, adds, dels) }
}
func lower(adds, dels int) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.Lower(rsKey, adds, dels) }
}
func deleteKey() step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.Delete(rsKey) }
}
func elapse(d time.Duration) step {
	return func(_ *expectations.Tracker, clk *fakeclock.Clock) { clk.Step(d) }
}

func TestTracker(t *testing.T) {
	const ttl = expectations.DefaultTTL
	tests := []struct {
		name  string
		ttl   time.Duration
		steps []step
		want  outcome
	}{
		// no record.
		{
			name: "never set key is satisfied (R-2.6)",
			want: outcome{satisfied: true},
		},
		{
			name:  "Raise on a missing key creates nothing (R-2.3)",
			steps: []step{raise(2, 2)},
			want:  outcome{satisfied: true},
		},
		{
			name:  "Lower on a missing key creates nothing (R-2.3)",
			steps: []step{lower(1, 1)},
			want:  outcome{satisfied: true},
		},
		{
			name:  "observations on a missing key create nothing (R-2.3)",
			steps: []step{creationObserved(), deletionObserved("default/a")},
			want:  outcome{satisfied: true},
		},

		//
		{
			name:  "Set stores both counters (R-2.1)",
			steps: []step{set(3, 2)},
			want:  outcome{adds: 3, dels: 2, ok: true},
		},
		{
			name:  "Set replaces the record wholesale (R-2.1)",
			steps: []step{set(3, 2), lower(1, 1), set(1, 0)},
			want:  outcome{adds: 1, ok: true},
		},
		{
			name:  "ExpectCreations zeroes the deletion counter (R-2.2)",
			steps: []step{set(0, 4), expectCreations(2)},
			want:  outcome{adds: 2, ok: true},
		},
		{
			name:  "ExpectDeletions zeroes the creation counter (R-2.2, R-3.1)",
			steps: []step{expectCreations(3), expectDeletions("default/a", "default/b")},
			want:  outcome{dels: 2, ok: true, delKeys: []string{"default/a", "default/b"}},
		},

		//
		{
			name:  "CreationObserved lowers adds by one (R-2.4)",
			steps: []step{expectCreations(2), creationObserved()},
			want:  outcome{adds: 1, ok: true},
		},
		{
			name:  "surplus observations go negative (R-2.4)",
			steps: []step{set(0, 0), creationObserved(), lower(0, 1)},
			want:  outcome{adds: -1, dels: -1, ok: true, satisfied: true},
		},
		{
			name:  "Raise adds to both counters (R-2.3)",
			steps: []step{set(1, 1), raise(2, 3)},
			want:  outcome{adds: 3, dels: 4, ok: true},
		},
		{
			name:  "Lower subtracts from both counters (R-2.3)",
			steps: []step{set(3, 3), lower(1, 2)},
			want:  outcome{adds: 2, dels: 1, ok: true},
		},
		{
			name:  "fulfilled when both counters reach zero (R-2.5)",
			steps: []step{expectCreations(2), creationObserved(), creationObserved()},
			want:  outcome{ok: true, satisfied: true},
		},
		{
			name:  "pending deletions alone block (R-2.5)",
			steps: []step{set(-1, 1)},
			want:  outcome{adds: -1, dels: 1, ok: true},
		},
		{
			name:  "pending creations alone block (R-2.5)",
			steps: []step{set(1, -1)},
			want:  outcome{adds: 1, dels: -1, ok: true},
		},
		{
			name:  "negative arguments are stored as given",
			steps: []step{set(-2, -3)},
			want:  outcome{adds: -2, dels: -3, ok: true, satisfied: true},
		},
		{
			name:  "negative ExpectCreations is stored as given (R-2.2)",
			steps: []step{expectCreations(-1)},
			want:  outcome{adds: -1, ok: true, satisfied: true},
		},

		// expiry.
		{
			name:  "exactly TTL old is not expired (R-2.6)",
			steps: []step{expectCreations(1), elapse(ttl)},
			want:  outcome{adds: 1, ok: true},
		},
		{
			name:  "TTL+1ns old is expired (R-2.6)",
			steps: []step{expectCreations(1), elapse(ttl + time.Nanosecond)},
			want:  outcome{adds: 1, ok: true, satisfied: true},
		},
		{
			name:  "custom TTL: exactly TTL is not expired",
			ttl:   time.Second,
			steps: []step{expectCreations(1), elapse(time.Second)},
			want:  outcome{adds: 1, ok: true},
		},
		{
			name:  "custom TTL: TTL+1ns is expired",
			ttl:   time.Second,
			steps: []step{expectCreations(1), elapse(time.Second + 1)},
			want:  outcome{adds: 1, ok: true, satisfied: true},
		},
		{
			name:  "negative TTL means DefaultTTL (R-1.1)",
			ttl:   -time.Second,
			steps: []step{expectCreations(1), elapse(ttl)},
			want:  outcome{adds: 1, ok: true},
		},
		{
			name:  "Raise does not restart the TTL (R-2.7)",
			steps: []step{expectCreations(1), elapse(4 * time.Minute), raise(1, 0), elapse(time.Minute + 1)},
			want:  outcome{adds: 2, ok: true, satisfied: true},
		},
		{
			name:  "Lower does not restart the TTL (R-2.7)",
			steps: []step{expectCreations(3), elapse(4 * time.Minute), lower(1, 0), elapse(time.Minute + 1)},
			want:  outcome{adds: 2, ok: true, satisfied: true},
		},
		{
			name:  "Set restarts the TTL (R-2.7)",
			steps: []step{expectCreations(1), elapse(4 * time.Minute), set(1, 0), elapse(2 * time.Minute)},
			want:  outcome{adds: 1, ok: true},
		},
		{
			name:  "ExpectDeletions restarts the TTL (R-3.1)",
			steps: []step{expectCreations(1), elapse(4 * time.Minute), expectDeletions("default/a"), elapse(2 * time.Minute)},
			want:  outcome{dels: 1, ok: true, delKeys: []string{"default/a"}},
		},
		{
			name:  "a clock that goes backwards does not expire (R-2.6)",
			steps: []step{expectCreations(1), elapse(-time.Hour)},
			want:  outcome{adds: 1, ok: true},
		},

		//
		{
			name:  "Delete removes the record (R-2.8)",
			steps: []step{expectCreations(2), deleteKey()},
			want:  outcome{satisfied: true},
		},
		{
			name:  "observations after Delete are no-ops (R-2.8)",
			steps: []step{expectCreations(2), deleteKey(), creationObserved(), raise(1, 1)},
			want:  outcome{satisfied: true},
		},
		{
			name:  "Delete also drops the deletion keys (R-3.3)",
			steps: []step{expectDeletions("default/a"), deleteKey(), set(0, 1), deletionObserved("default/a")},
			want:  outcome{dels: 1, ok: true},
		},

		//
		{
			name:  "duplicate pod keys collapse (R-3.1)",
			steps: []step{expectDeletions("default/a", "default/a", "default/b")},
			want:  outcome{dels: 2, ok: true, delKeys: []string{"default/a", "default/b"}},
		},
		{
			name:  "a new key set replaces the old one (R-3.1)",
			steps: []step{expectDeletions("default/a", "default/b"), expectDeletions("default/c"), deletionObserved("default/a")},
			want:  outcome{dels: 1, ok: true, delKeys: []string{"default/c"}},
		},
		{
			name:  "no pod keys give a satisfied (0, 0) record (R-3.1)",
			steps: []step{expectCreations(3), expectDeletions()},
			want:  outcome{ok: true, satisfied: true},
		},
		{
			name:  "a deletion counts once per pod key (R-3.2)",
			steps: []step{expectDeletions("default/a", "default/b"), deletionObserved("default/a"), deletionObserved("default/a")},
			want:  outcome{dels: 1, ok: true, delKeys: []string{"default/b"}},
		},
		{
			name:  "all expected deletions observed (R-3.2)",
			steps: []step{expectDeletions("default/a", "default/b"), deletionObserved("default/b"), deletionObserved("default/a")},
			want:  outcome{ok: true, satisfied: true},
		},
		{
			name:  "an unknown pod key is a no-op (R-3.2)",
			steps: []step{expectDeletions("default/a"), deletionObserved("default/z")},
			want:  outcome{dels: 1, ok: true, delKeys: []string{"default/a"}},
		},
		{
			name:  "without a key set DeletionObserved is a no-op (R-3.2)",
			steps: []step{set(0, 2), deletionObserved("default/a")},
			want:  outcome{dels: 2, ok: true},
		},

		//
		{
			name:  "ExpectCreations keeps the stale key set (R-3.5)",
			steps: []step{expectDeletions("default/a", "default/b"), expectCreations(1), deletionObserved("default/a")},
			want:  outcome{adds: 1, dels: -1, ok: true, delKeys: []string{"default/b"}},
		},
		{
			name:  "Set keeps the key set (R-3.5)",
			steps: []step{expectDeletions("default/a"), set(0, 5), deletionObserved("default/a")},
			want:  outcome{dels: 4, ok: true},
		},
		{
			name:  "satisfaction ignores set membership (R-3.6)",
			steps: []step{expectDeletions("default/a"), lower(0, 1)},
			want:  outcome{ok: true, satisfied: true, delKeys: []string{"default/a"}},
		},
		{
			name:  "Raise does not add deletion keys (R-3.6)",
			steps: []step{expectDeletions("default/a"), raise(0, 1), deletionObserved("default/a")},
			want:  outcome{dels: 1, ok: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, clk := newTracker(tc.ttl)
			for _, s := range tc.steps {
				s(tr, clk)
			}
			assertCounters(t, tr, tc.want.adds, tc.want.dels, tc.want.ok, tc.want.satisfied)

			snap, found := tr.Snapshot(rsKey)
			assert.Equal(t, tc.want.ok, found, "Snapshot found")
			assert.Equal(t, tc.want.delKeys, snap.DeletionKeys, "Snapshot.DeletionKeys")
			assert.Equal(t, tc.want.satisfied, snap.Satisfied, "Snapshot.Satisfied")
			assert.Equal(t, tc.want.adds, snap.Adds, "Snapshot.Adds")
			assert.Equal(t, tc.want.dels, snap.Dels, "Snapshot.Dels")
		})
	}
}

func TestTrackerZeroValue(t *testing.T) {
	var tr expectations.Tracker
	assert.True(t, tr.Satisfied(rsKey), "never set (R-2.6)")

	tr.ExpectCreations(rsKey, 1)
	assert.False(t, tr.Satisfied(rsKey), "a fresh record on the real clock, upstream's only clock, is not expired (R-2.10)")
	tr.ExpectDeletions(rsKey, []string{"default/a"})
	tr.DeletionObserved(rsKey, "default/a")
	assert.True(t, tr.Satisfied(rsKey))

	snap, ok := tr.Snapshot(rsKey)
	require.True(t, ok)
	assert.Equal(t, expectations.DefaultTTL, snap.TTL, "zero Tracker uses DefaultTTL")
	assert.Equal(t, expectations.DefaultTTL, 5*time.Minute, "R-1.1")
}

func TestTrackerKeysAreIndependent(t *testing.T) {
	tr, _ := newTracker(0)
	keys := []string{"", "default/web", "default/web2", "other/web"}
	for i, k := range keys {
		tr.Set(k, i+1, 0)
	}
	tr.CreationObserved("")
	tr.Delete("other/web")
	for i, k := range keys[:3] {
		adds, _, ok := tr.Pending(k)
		require.True(t, ok, "key %q", k)
		want := i + 1
		if k == "" {
			want = 0 // the empty key is an ordinary key
		}
		assert.Equal(t, want, adds, "key %q", k)
	}
	_, _, ok := tr.Pending("other/web")
	assert.False(t, ok, "no record, no counters (R-2.9)")
}

func TestExpectDeletionsDoesNotKeepOrModifyPodKeys(t *testing.T) {
	tr, _ := newTracker(0)
	podKeys := []string{"default/b", "default/a", "default/b"}
	orig := slices.Clone(podKeys)

	tr.ExpectDeletions(rsKey, podKeys)
	assert.Equal(t, orig, podKeys, "the caller's slice is not modified")

	podKeys[0], podKeys[1] = "default/x", "default/y" // the caller reuses its slice
	tr.DeletionObserved(rsKey, "default/x")
	tr.DeletionObserved(rsKey, "default/a")
	_, dels, _ := tr.Pending(rsKey)
	assert.Equal(t, 1, dels, "only the keys given at the call count (R-3.2)")
}

// TestTrackerConcurrentObservers runs many goroutines observing creations and
// deletions of many keys (every tracked pod observed by every goroutine) and
// recording writes, with readers and hooks alongside; under -race. The totals
// must add up exactly.
func TestTrackerConcurrentObservers(t *testing.T) {
	const (
		workers = 8
		keys    = 16
		perKey  = 50 // creations each worker observes per key; pod keys per key
	)
	cacheRV := "1" // only read: the cache function must be safe to call concurrently
	tr, clk := newTrackerWith(expectations.Options{
		Policy: expectations.EvidenceFirst,
		Gate:   podsGate(func() string { return cacheRV }),
		Hooks:  expectations.Hooks{Resolved: (&hookRecorder{}).resolved},
	})
	key := func(i int) string { return fmt.Sprintf("ns/rs-%d", i) }
	podKeys := make([][]string, keys)
	for i := range keys {
		for j := range perKey {
			podKeys[i] = append(podKeys[i], fmt.Sprintf("ns/rs-%d-pod-%d", i, j))
		}
		switch i % 3 {
		case 0:
			tr.ExpectCreations(key(i), workers*perKey)
		case 1:
			tr.ExpectDeletions(key(i), podKeys[i])
		case 2:
			tr.ExpectCreationKeys(key(i), podKeys[i])
		}
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range perKey {
				for i := range keys {
					// every worker observes every tracked pod: counted once
					pod := podKeys[i][(j+w)%perKey]
					switch i % 3 {
					case 0:
						tr.CreationObserved(key(i))
					case 1:
						tr.DeletionObserved(key(i), pod)
					case 2:
						tr.CreationObservedKey(key(i), pod)
					}
					tr.Raise(key(i), 1, 1)
					tr.Lower(key(i), 1, 1)
					tr.Gate().Wrote(key(i), "", expectations.PodsResource, fmt.Sprint(2+j))
				}
			}
		})
		wg.Go(func() {
			for i := range keys * perKey {
				_ = tr.Satisfied(key(i % keys))
				_ = tr.Check(key(i % keys))
				_, _, _ = tr.Pending(key(i % keys))
				_, _ = tr.Snapshot(key(i % keys))
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			clk.Step(time.Millisecond)
		}
	})
	wg.Wait()

	for i := range keys {
		adds, dels, ok := tr.Pending(key(i))
		require.True(t, ok)
		assert.Zero(t, adds, "key %d adds", i)
		assert.Zero(t, dels, "key %d dels", i)
		assert.True(t, tr.Satisfied(key(i)), "key %d", i)
	}
}

// The fixed entry points of DESIGN.md and issue 7, pinned at compile time.
var (
	_ time.Duration                                                     = expectations.DefaultTTL
	_ time.Duration                                                     = expectations.DefaultSafetyLimit
	_ expectations.Clock                                                = (*fakeclock.Clock)(nil)
	_ func(expectations.Options) *expectations.Tracker                  = expectations.New
	_ func(*expectations.Tracker, string, int, int)                     = (*expectations.Tracker).Set
	_ func(*expectations.Tracker, string, int)                          = (*expectations.Tracker).ExpectCreations
	_ func(*expectations.Tracker, string, []string)                     = (*expectations.Tracker).ExpectDeletions
	_ func(*expectations.Tracker, string)                               = (*expectations.Tracker).CreationObserved
	_ func(*expectations.Tracker, string, string)                       = (*expectations.Tracker).DeletionObserved
	_ func(*expectations.Tracker, string, int, int)                     = (*expectations.Tracker).Raise
	_ func(*expectations.Tracker, string, int, int)                     = (*expectations.Tracker).Lower
	_ func(*expectations.Tracker, string) bool                          = (*expectations.Tracker).Satisfied
	_ func(*expectations.Tracker, string)                               = (*expectations.Tracker).Delete
	_ func(*expectations.Tracker, string) (int, int, bool)              = (*expectations.Tracker).Pending
	_ func(*expectations.Tracker, string, []string)                     = (*expectations.Tracker).ExpectCreationKeys
	_ func(*expectations.Tracker, string, string)                       = (*expectations.Tracker).CreationObservedKey
	_ func(*expectations.Tracker, string) expectations.Status           = (*expectations.Tracker).Check
	_ func(*expectations.Tracker, string) (expectations.Snapshot, bool) = (*expectations.Tracker).Snapshot
	_                                                                   = expectations.Options{
		TTL: 0, Clock: nil, Policy: expectations.ExpireAfterTTL, SafetyLimit: 0,
		Gate:  podsGate(func() string { return "" }),
		Hooks: expectations.Hooks{Resolved: func(string, expectations.Resolution, time.Duration) {}},
	}
)
