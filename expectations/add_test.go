package expectations_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/expectations"
)

func TestAddKeys(t *testing.T) {
	type step func(tr *expectations.Tracker)
	cases := []struct {
		name       string
		steps      []step
		adds, dels int
		creations  []string
		deletions  []string
	}{
		{"a creation and a deletion pending under one key", []step{
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/new") },
			func(tr *expectations.Tracker) { tr.AddDeletionKey(rsKey, "ns/old") },
		}, 1, 1, []string{"ns/new"}, []string{"ns/old"}},
		{"one pod at a time appends", []step{
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/a") },
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/b") },
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/a") },
		}, 2, 0, []string{"ns/a", "ns/b"}, nil},
		{"adding a deletion keeps ExpectCreationKeys' creations", []step{
			func(tr *expectations.Tracker) { tr.ExpectCreationKeys(rsKey, []string{"ns/a", "ns/b"}) },
			func(tr *expectations.Tracker) { tr.AddDeletionKey(rsKey, "ns/c") },
		}, 2, 1, []string{"ns/a", "ns/b"}, []string{"ns/c"}},
		{"adding a creation keeps ExpectDeletions' deletions", []step{
			func(tr *expectations.Tracker) { tr.ExpectDeletions(rsKey, []string{"ns/a", "ns/b"}) },
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/c") },
		}, 1, 2, []string{"ns/c"}, []string{"ns/a", "ns/b"}},
		{"counted creations are kept when tracking starts", []step{
			func(tr *expectations.Tracker) { tr.ExpectCreations(rsKey, 2) },
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/a") },
		}, 3, 0, []string{"ns/a"}, nil},
		{"a negative counter does not absorb the new creation", []step{
			func(tr *expectations.Tracker) { tr.ExpectCreations(rsKey, 0) },
			func(tr *expectations.Tracker) { tr.CreationObserved(rsKey) },
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/a") },
		}, 1, 0, []string{"ns/a"}, nil},
		{"a deletion key left over from an earlier round is dropped (R-3.5)", []step{
			func(tr *expectations.Tracker) { tr.ExpectDeletions(rsKey, []string{"ns/stale"}) },
			func(tr *expectations.Tracker) { tr.Set(rsKey, 0, 0) }, // keeps ns/stale, as upstream
			func(tr *expectations.Tracker) { tr.AddDeletionKey(rsKey, "ns/a") },
			func(tr *expectations.Tracker) { tr.DeletionObserved(rsKey, "ns/stale") }, // settles nothing
		}, 0, 1, nil, []string{"ns/a"}},
		{"observations settle what was added", []step{
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/a") },
			func(tr *expectations.Tracker) { tr.AddDeletionKey(rsKey, "ns/b") },
			func(tr *expectations.Tracker) { tr.CreationObservedKey(rsKey, "ns/other") },
			func(tr *expectations.Tracker) { tr.CreationObservedKey(rsKey, "ns/a") },
			func(tr *expectations.Tracker) { tr.DeletionObserved(rsKey, "ns/b") },
		}, 0, 0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, _ := newTracker(time.Minute)
			for _, s := range c.steps {
				s(tr)
			}
			adds, dels, ok := tr.Pending(rsKey)
			require.True(t, ok)
			assert.Equal(t, c.adds, adds, "adds")
			assert.Equal(t, c.dels, dels, "dels")
			assert.Equal(t, c.adds <= 0 && c.dels <= 0, tr.Satisfied(rsKey))
			creations, deletions := tr.PendingKeys(rsKey)
			assert.Equal(t, c.creations, creations)
			assert.Equal(t, c.deletions, deletions)
		})
	}
}

// TestAddRestartsTTL: each add is a new round, so the key blocks for a
// full TTL after the last one.
func TestAddRestartsTTL(t *testing.T) {
	tr, clk := newTracker(time.Minute)
	tr.AddCreationKey(rsKey, "ns/a")
	clk.Step(50 * time.Second)
	tr.AddDeletionKey(rsKey, "ns/b")
	clk.Step(50 * time.Second)
	assert.False(t, tr.Satisfied(rsKey), "100s after the first add, 50s after the last")
	clk.Step(10*time.Second + time.Nanosecond)
	assert.True(t, tr.Satisfied(rsKey), "expired a TTL after the last add")
}

func TestPendingKeysNoRecord(t *testing.T) {
	var tr expectations.Tracker
	creations, deletions := tr.PendingKeys(rsKey)
	assert.Nil(t, creations)
	assert.Nil(t, deletions)
}

// TestAddConcurrent records one pod at a time from many goroutines while
// others observe them; every pod settled, the key is satisfied.
func TestAddConcurrent(t *testing.T) {
	tr, _ := newTracker(time.Hour)
	const workers, perWorker = 4, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				pod := fmt.Sprintf("ns/w%d-%d", w, i)
				tr.AddCreationKey(rsKey, pod)
				tr.AddDeletionKey(rsKey, pod)
				_, _ = tr.PendingKeys(rsKey)
				tr.CreationObservedKey(rsKey, pod)
				tr.DeletionObserved(rsKey, pod)
			}
		})
	}
	wg.Wait()
	adds, dels, ok := tr.Pending(rsKey)
	require.True(t, ok)
	assert.Zero(t, adds)
	assert.Zero(t, dels)
	assert.True(t, tr.Satisfied(rsKey))
}

// BenchmarkAddCycle records cyclePods pods one at a time, a creation and a
// deletion each, observes them all and checks the key: the per-pod shape,
// next to BenchmarkCycle's whole-set one.
func BenchmarkAddCycle(b *testing.B) {
	podKeys := make([]string, cyclePods)
	for i := range podKeys {
		podKeys[i] = fmt.Sprintf("default/web-%05d", i)
	}
	var tr expectations.Tracker
	b.ReportAllocs()
	for b.Loop() {
		for _, pk := range podKeys {
			tr.AddCreationKey(rsKey, pk)
			tr.AddDeletionKey(rsKey, pk)
		}
		for _, pk := range podKeys {
			tr.CreationObservedKey(rsKey, pk)
			tr.DeletionObserved(rsKey, pk)
		}
		if !tr.Satisfied(rsKey) {
			b.Fatal("not satisfied after every pod was observed")
		}
	}
}
