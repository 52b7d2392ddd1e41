package expectations_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/expectations"
)

func TestSnapshot(t *testing.T) {
	tr, clk := newTracker(0)

	snap, ok := tr.Snapshot(rsKey)
	assert.False(t, ok)
	assert.True(t, snap.Satisfied, "never set (R-2.6)")
	assert.Equal(t, rsKey+": no expectations recorded (satisfied)", snap.String())

	tr.ExpectDeletions(rsKey, []string{"default/c", "default/a", "default/b"})
	start := clk.Now()
	clk.Step(90 * time.Second)
	tr.DeletionObserved(rsKey, "default/b")

	snap, ok = tr.Snapshot(rsKey)
	require.True(t, ok)
	assert.Equal(t, expectations.Snapshot{
		Key:          rsKey,
		Status:       expectations.Status{Resolution: expectations.Waiting, Age: 90 * time.Second, Dels: 2},
		DeletionKeys: []string{"default/a", "default/c"},
		Since:        start,
		TTL:          expectations.DefaultTTL,
		Limit:        expectations.DefaultTTL,
	}, exported(snap))
	assert.Equal(t, rsKey+": waiting for 2 deletions [default/a default/c] for 1m30s (expires after 5m0s)", snap.String())

	// The snapshot is a copy: later changes do not show through it.
	snap.DeletionKeys[0] = "mutated"
	tr.DeletionObserved(rsKey, "default/a")
	again, _ := tr.Snapshot(rsKey)
	assert.Equal(t, []string{"default/c"}, again.DeletionKeys)

	clk.Step(4 * time.Minute)
	snap, _ = tr.Snapshot(rsKey)
	assert.True(t, snap.Satisfied)
	assert.Equal(t, expectations.Expired, snap.Resolution)
	assert.Equal(t, rsKey+": satisfied: expired after 5m30s (limit 5m0s) with 1 deletion [default/c] still pending", snap.String())

	tr.ExpectCreations(rsKey, 1)
	clk.Step(time.Second)
	tr.CreationObserved(rsKey)
	snap, _ = tr.Snapshot(rsKey)
	assert.True(t, snap.Satisfied)
	assert.Equal(t, expectations.Fulfilled, snap.Resolution)
	assert.Equal(t, rsKey+": satisfied: all expectations observed (round started 1s ago)", snap.String())
}

func TestSnapshotStringPending(t *testing.T) {
	many := make([]string, 7)
	for i := range many {
		many[i] = fmt.Sprintf("ns/p%d", i)
	}
	tests := []struct {
		name  string
		setup func(tr *expectations.Tracker)
		want  string
	}{
		{
			name:  "one creation",
			setup: func(tr *expectations.Tracker) { tr.ExpectCreations(rsKey, 1) },
			want:  rsKey + ": waiting for 1 creation for 0s (expires after 5m0s)",
		},
		{
			name:  "creations and counted deletions",
			setup: func(tr *expectations.Tracker) { tr.Set(rsKey, 3, 1) },
			want:  rsKey + ": waiting for 3 creations and 1 deletion for 0s (expires after 5m0s)",
		},
		{
			name:  "negative counters are not listed",
			setup: func(tr *expectations.Tracker) { tr.Set(rsKey, -1, 2) },
			want:  rsKey + ": waiting for 2 deletions for 0s (expires after 5m0s)",
		},
		{
			name:  "long key lists are elided",
			setup: func(tr *expectations.Tracker) { tr.ExpectDeletions(rsKey, many) },
			want:  rsKey + ": waiting for 7 deletions [ns/p0 ns/p1 ns/p2 ns/p3 ns/p4 … +2 more] for 0s (expires after 5m0s)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newTracker(0)
			tc.setup(tr)
			snap, ok := tr.Snapshot(rsKey)
			require.True(t, ok)
			assert.Equal(t, tc.want, snap.String())
		})
	}
}

func TestSnapshotZeroValue(t *testing.T) {
	var snap expectations.Snapshot
	assert.Equal(t, ": no expectations recorded (satisfied)", snap.String())
}

// exported returns s with its unexported fields cleared, for comparison with
// a literal.
func exported(s expectations.Snapshot) expectations.Snapshot {
	return expectations.Snapshot{
		Key: s.Key, Status: s.Status, DeletionKeys: s.DeletionKeys, CreationKeys: s.CreationKeys,
		TracksCreations: s.TracksCreations, Since: s.Since, Policy: s.Policy, TTL: s.TTL, Limit: s.Limit,
		WriteRV: s.WriteRV, WriteRVInvalid: s.WriteRVInvalid, CacheRV: s.CacheRV,
	}
}
