package expectations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

// fakeCache is an informer's last-synced resourceVersion.
type fakeCache struct {
	rv    string
	calls int
}

func (c *fakeCache) Version() string {
	c.calls++
	return c.rv
}

func recordWrite(rv string) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) {
		tr.Gate().Wrote(rsKey, "", expectations.PodsResource, rv)
	}
}

func TestCheck(t *testing.T) {
	const (
		ttl    = expectations.DefaultTTL
		safety = expectations.DefaultSafetyLimit
	)
	type status = expectations.Status
	evidence := expectations.Options{Policy: expectations.EvidenceFirst}
	tests := []struct {
		name       string
		opts       expectations.Options // Clock is set by the test
		noCache    bool                 // a Gate without caches
		cacheRV    string
		steps      []step
		want       status
		cacheCalls int
	}{
		// ExpireAfterTTL: upstream.
		{
			name: "no record (R-2.6)",
			want: status{Satisfied: true, Resolution: expectations.NoRecord},
		},
		{
			name:  "pending within the TTL (R-2.6)",
			steps: []step{expectCreations(2), elapse(ttl)},
			want:  status{Resolution: expectations.Waiting, Age: ttl, Adds: 2},
		},
		{
			name:  "pending past the TTL (R-2.6)",
			steps: []step{expectCreations(2), elapse(ttl + 1)},
			want:  status{Satisfied: true, Resolution: expectations.Expired, Age: ttl + 1, Adds: 2},
		},
		{
			name:  "fulfilled (R-2.5)",
			steps: []step{expectCreations(1), elapse(time.Second), creationObserved()},
			want:  status{Satisfied: true, Resolution: expectations.Fulfilled, Age: time.Second},
		},
		{
			name:    "ExpireAfterTTL ignores evidence",
			cacheRV: "50",
			steps:   []step{expectCreations(1), recordWrite("10")},
			want:    status{Resolution: expectations.Waiting, Adds: 1},
		},
		{
			name:  "an unknown policy behaves as ExpireAfterTTL",
			opts:  expectations.Options{Policy: 42},
			steps: []step{expectCreations(1), elapse(ttl + 1)},
			want:  status{Satisfied: true, Resolution: expectations.Expired, Age: ttl + 1, Adds: 1},
		},

		// NeverExpire.
		{
			name:  "NeverExpire waits past any TTL",
			opts:  expectations.Options{Policy: expectations.NeverExpire},
			steps: []step{expectCreations(1), elapse(100 * ttl)},
			want:  status{Resolution: expectations.Waiting, Age: 100 * ttl, Adds: 1},
		},
		{
			name:  "NeverExpire is satisfied when fulfilled",
			opts:  expectations.Options{Policy: expectations.NeverExpire},
			steps: []step{expectDeletions("default/a"), deletionObserved("default/a")},
			want:  status{Satisfied: true, Resolution: expectations.Fulfilled},
		},
		{
			name:  "NeverExpire is satisfied after Delete",
			opts:  expectations.Options{Policy: expectations.NeverExpire},
			steps: []step{expectCreations(1), deleteKey()},
			want:  status{Satisfied: true, Resolution: expectations.NoRecord},
		},

		// EvidenceFirst with evidence.
		{
			name:       "cache at the write: events were missed",
			opts:       evidence,
			cacheRV:    "10",
			steps:      []step{expectCreations(2), recordWrite("10"), creationObserved(), elapse(time.Second)},
			want:       status{Satisfied: true, Resolution: expectations.ResolvedByEvidence, Age: time.Second, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "cache past the write: events were missed",
			opts:       evidence,
			cacheRV:    "11",
			steps:      []step{expectCreations(1), recordWrite("10")},
			want:       status{Satisfied: true, Resolution: expectations.ResolvedByEvidence, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "versions compare as numbers, not strings",
			opts:       evidence,
			cacheRV:    "10",
			steps:      []step{expectCreations(1), recordWrite("9")},
			want:       status{Satisfied: true, Resolution: expectations.ResolvedByEvidence, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "cache behind the write: wait",
			opts:       evidence,
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10")},
			want:       status{Resolution: expectations.WaitingForCache, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "cache behind the write: wait past the TTL",
			opts:       evidence,
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(6 * time.Minute)},
			want:       status{Resolution: expectations.WaitingForCache, Age: 6 * time.Minute, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "cache behind: exactly the safety limit still waits",
			opts:       evidence,
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(safety)},
			want:       status{Resolution: expectations.WaitingForCache, Age: safety, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "cache behind: past the safety limit expires",
			opts:       evidence,
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(safety + 1)},
			want:       status{Satisfied: true, Resolution: expectations.Expired, Age: safety + 1, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "custom safety limit",
			opts:       expectations.Options{Policy: expectations.EvidenceFirst, SafetyLimit: 10 * time.Minute},
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(10*time.Minute + 1)},
			want:       status{Satisfied: true, Resolution: expectations.Expired, Age: 10*time.Minute + 1, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "negative safety limit means the default",
			opts:       expectations.Options{Policy: expectations.EvidenceFirst, SafetyLimit: -1},
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(safety)},
			want:       status{Resolution: expectations.WaitingForCache, Age: safety, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "a safety limit below the TTL is raised to the TTL",
			opts:       expectations.Options{Policy: expectations.EvidenceFirst, SafetyLimit: time.Minute},
			cacheRV:    "9",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(ttl)},
			want:       status{Resolution: expectations.WaitingForCache, Age: ttl, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:       "the highest write counts",
			opts:       evidence,
			cacheRV:    "15",
			steps:      []step{expectCreations(2), recordWrite("20"), recordWrite("12")},
			want:       status{Resolution: expectations.WaitingForCache, Adds: 2},
			cacheCalls: 1,
		},
		{
			name:       "deletion rounds with recorded writes use the evidence too",
			opts:       evidence,
			cacheRV:    "30",
			steps:      []step{expectDeletions("default/a"), recordWrite("30")},
			want:       status{Satisfied: true, Resolution: expectations.ResolvedByEvidence, Dels: 1},
			cacheCalls: 1,
		},

		// EvidenceFirst without usable evidence: the TTL.
		{
			name:    "no write recorded: TTL",
			opts:    evidence,
			cacheRV: "50",
			steps:   []step{expectCreations(1), elapse(ttl + 1)},
			want:    status{Satisfied: true, Resolution: expectations.Expired, Age: ttl + 1, Adds: 1},
		},
		{
			name:    "no write recorded: waiting within the TTL",
			opts:    evidence,
			cacheRV: "50",
			steps:   []step{expectCreations(1), elapse(ttl)},
			want:    status{Resolution: expectations.Waiting, Age: ttl, Adds: 1},
		},
		{
			name:    "no pods cache: TTL",
			opts:    evidence,
			noCache: true,
			steps:   []step{expectCreations(1), recordWrite("10"), elapse(ttl + 1)},
			want:    status{Satisfied: true, Resolution: expectations.Expired, Age: ttl + 1, Adds: 1},
		},
		{
			name:       "malformed cache version: TTL",
			opts:       evidence,
			cacheRV:    "",
			steps:      []step{expectCreations(1), recordWrite("10"), elapse(ttl)},
			want:       status{Resolution: expectations.Waiting, Age: ttl, Adds: 1},
			cacheCalls: 1,
		},
		{
			name:    "a malformed write version spoils the round's evidence",
			opts:    evidence,
			cacheRV: "50",
			steps:   []step{expectCreations(1), recordWrite("10"), recordWrite("007"), recordWrite("11")},
			want:    status{Resolution: expectations.Waiting, Adds: 1},
		},
		{
			name:    "a new round forgets the writes",
			opts:    evidence,
			cacheRV: "50",
			steps:   []step{expectCreations(1), recordWrite("10"), expectCreations(1)},
			want:    status{Resolution: expectations.Waiting, Adds: 1},
		},
		{
			name:    "ExpectDeletions forgets the writes",
			opts:    evidence,
			cacheRV: "50",
			steps:   []step{expectCreations(1), recordWrite("10"), expectDeletions("default/a")},
			want:    status{Resolution: expectations.Waiting, Dels: 1},
		},
		{
			name:    "Wrote without a record leaves no evidence",
			opts:    evidence,
			cacheRV: "50",
			steps:   []step{recordWrite("10"), expectCreations(1)},
			want:    status{Resolution: expectations.Waiting, Adds: 1},
		},
		{
			name:    "fulfilled needs no evidence",
			opts:    evidence,
			cacheRV: "5",
			steps:   []step{expectCreations(1), recordWrite("10"), creationObserved()},
			want:    status{Satisfied: true, Resolution: expectations.Fulfilled},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cache := &fakeCache{rv: tc.cacheRV}
			clk := fakeclock.New(epoch)
			opts := tc.opts
			opts.Clock = clk
			opts.Gate = podsGate(cache.Version)
			if tc.noCache {
				opts.Gate = new(expectations.Gate) // records writes, has no cache
			}
			tr := expectations.New(opts)
			for _, s := range tc.steps {
				s(tr, clk)
			}
			got := tr.Check(rsKey)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.cacheCalls, cache.calls, "pods cache calls")
			assert.Equal(t, got.Satisfied, tr.Satisfied(rsKey), "Satisfied == Check().Satisfied")
			snap, _ := tr.Snapshot(rsKey)
			assert.Equal(t, got, snap.Status, "Snapshot.Status == Check()")
		})
	}
}

func TestPolicyAndResolutionNames(t *testing.T) {
	assert.Equal(t, "ExpireAfterTTL", expectations.ExpiryPolicy(0).String(), "the zero policy is upstream's")
	assert.Equal(t, "NeverExpire", expectations.NeverExpire.String())
	assert.Equal(t, "EvidenceFirst", expectations.EvidenceFirst.String())
	assert.Equal(t, "ExpiryPolicy(9)", expectations.ExpiryPolicy(9).String())

	names := map[expectations.Resolution]string{
		expectations.Waiting:            "Waiting",
		expectations.WaitingForCache:    "WaitingForCache",
		expectations.NoRecord:           "NoRecord",
		expectations.Fulfilled:          "Fulfilled",
		expectations.Expired:            "Expired",
		expectations.ResolvedByEvidence: "ResolvedByEvidence",
		expectations.Resolution(-1):     "Resolution(-1)",
	}
	for r, name := range names {
		assert.Equal(t, name, r.String())
	}
	assert.Equal(t, expectations.Waiting, expectations.Status{}.Resolution, "the zero Status is unsatisfied")
}
