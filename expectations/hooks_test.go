package expectations_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/expectations"
)

type resolvedCall struct {
	key     string
	r       expectations.Resolution
	pending time.Duration
}

// hookRecorder records Hooks.Resolved calls; safe for concurrent use.
type hookRecorder struct {
	mu    sync.Mutex
	calls []resolvedCall
}

func (h *hookRecorder) resolved(key string, r expectations.Resolution, pending time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, resolvedCall{key, r, pending})
}

func (h *hookRecorder) take() []resolvedCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls
	h.calls = nil
	return c
}

func TestHooksResolved(t *testing.T) {
	cache := &fakeCache{rv: "100"}
	hooks := &hookRecorder{}
	tr, clk := newTrackerWith(expectations.Options{
		Policy: expectations.EvidenceFirst,
		Gate:   podsGate(cache.Version),
		Hooks:  expectations.Hooks{Resolved: hooks.resolved},
	})

	// Fulfilled: once, by the first satisfied check.
	tr.ExpectCreations(rsKey, 1)
	clk.Step(time.Second)
	require.False(t, tr.Satisfied(rsKey))
	assert.Empty(t, hooks.take(), "not satisfied yet")
	tr.CreationObserved(rsKey)
	clk.Step(time.Second)
	_, _ = tr.Snapshot(rsKey)
	assert.Empty(t, hooks.take(), "Snapshot never calls hooks")
	require.True(t, tr.Satisfied(rsKey))
	require.True(t, tr.Check(rsKey).Satisfied)
	assert.Equal(t, []resolvedCall{{rsKey, expectations.Fulfilled, 2 * time.Second}}, hooks.take())

	// A Raise in a resolved round does not fire again.
	tr.Raise(rsKey, 1, 0)
	tr.Lower(rsKey, 1, 0)
	require.True(t, tr.Satisfied(rsKey))
	assert.Empty(t, hooks.take(), "once per round")

	// Expired, in a new round.
	tr.ExpectDeletions(rsKey, []string{"default/a"})
	clk.Step(expectations.DefaultTTL + 1)
	require.True(t, tr.Satisfied(rsKey))
	tr.DeletionObserved(rsKey, "default/a")
	require.True(t, tr.Satisfied(rsKey))
	assert.Equal(t, []resolvedCall{{rsKey, expectations.Expired, expectations.DefaultTTL + 1}}, hooks.take())

	// Resolved by evidence.
	tr.ExpectCreationKeys(rsKey, []string{"default/b"})
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "99")
	clk.Step(time.Minute)
	assert.Equal(t, expectations.ResolvedByEvidence, tr.Check(rsKey).Resolution)
	assert.Equal(t, []resolvedCall{{rsKey, expectations.ResolvedByEvidence, time.Minute}}, hooks.take())

	// Rounds that never had anything pending resolve nothing.
	tr.ExpectCreations(rsKey, 0)
	tr.ExpectDeletions(rsKey, nil)
	tr.Set(rsKey, -1, 0)
	require.True(t, tr.Satisfied(rsKey))
	require.True(t, tr.Satisfied("default/never-set"))
	assert.Empty(t, hooks.take())

	// ... unless a Raise makes them pending.
	tr.ExpectCreations(rsKey, 0)
	tr.Raise(rsKey, 1, 0)
	require.False(t, tr.Satisfied(rsKey))
	tr.CreationObserved(rsKey)
	require.True(t, tr.Satisfied(rsKey))
	assert.Equal(t, []resolvedCall{{rsKey, expectations.Fulfilled, 0}}, hooks.take())

	// A deleted and re-set key is a new round.
	tr.ExpectCreations(rsKey, 1)
	tr.Delete(rsKey)
	tr.ExpectCreations(rsKey, 1)
	tr.CreationObserved(rsKey)
	require.True(t, tr.Satisfied(rsKey))
	assert.Len(t, hooks.take(), 1)
}

func TestHooksMayCallTheTracker(t *testing.T) {
	var tr *expectations.Tracker
	var seen []string
	tr, _ = newTrackerWith(expectations.Options{Hooks: expectations.Hooks{
		Resolved: func(key string, _ expectations.Resolution, _ time.Duration) {
			snap, _ := tr.Snapshot(key) // would deadlock if a lock were held
			seen = append(seen, snap.String())
			tr.ExpectCreations(key, 1)
		},
	}})
	tr.ExpectCreations(rsKey, 1)
	tr.CreationObserved(rsKey)
	require.True(t, tr.Satisfied(rsKey))
	assert.Equal(t, []string{rsKey + ": satisfied: all expectations observed (round started 0s ago)"}, seen)
	assert.False(t, tr.Satisfied(rsKey), "the hook started a new round")
}

// TestHooksOncePerRoundConcurrently races many checks of one resolved round
// (run with -race): the hook fires exactly once.
func TestHooksOncePerRoundConcurrently(t *testing.T) {
	hooks := &hookRecorder{}
	tr, _ := newTrackerWith(expectations.Options{Hooks: expectations.Hooks{Resolved: hooks.resolved}})
	for round := range 20 {
		tr.ExpectCreations(rsKey, 4)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				tr.CreationObserved(rsKey)
				for range 10 {
					_ = tr.Satisfied(rsKey)
					_ = tr.Check(rsKey)
				}
			})
		}
		wg.Wait()
		require.True(t, tr.Satisfied(rsKey))
		assert.Len(t, hooks.take(), 1, "round %d", round)
	}
}
