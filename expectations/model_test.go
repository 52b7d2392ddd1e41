package expectations_test

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

// modelRecord is the plain-Go model of one key's expectations, written
// straight from docs/rules.md §2–§3 and the Tracker's documented extensions.
type modelRecord struct {
	adds, dels int
	since      time.Time
	delKeys    map[string]bool // nil: ExpectDeletions never called
	addKeys    map[string]bool
	trackAdds  bool
	writeRV    string // highest well-formed write this round, "" if none
	writeBad   bool   // a malformed write was recorded this round

	pendingSeen, resolved bool // for Hooks.Resolved
}

func (r *modelRecord) fulfilled() bool { return r.adds <= 0 && r.dels <= 0 }

// trackerModel drives a Tracker and the model with the same random actions.
type trackerModel struct {
	tr      *expectations.Tracker
	clk     *fakeclock.Clock
	cache   *fakeCache // nil: no pods cache
	hooks   *hookRecorder
	policy  expectations.ExpiryPolicy
	ttl     time.Duration   // effective TTL
	safety  time.Duration   // effective safety limit
	limits  []time.Duration // ages worth probing: TTL, safety limit, as configured
	records map[string]*modelRecord
}

var (
	modelKeys    = []string{"", "default/web", "default/web/workers", "other/db"}
	modelPodKeys = []string{"default/p0", "default/p1", "default/p2", "default/p3"}
	// modelRVs mixes well-formed resourceVersions with malformed ones.
	modelRVs = []string{"5", "9", "10", "12", "100", "", "0", "007", "x1"}
)

func newTrackerModel(t *rapid.T) *trackerModel {
	opts := expectations.Options{
		TTL:         rapid.SampledFrom([]time.Duration{0, -1, time.Second, time.Minute}).Draw(t, "ttl"),
		SafetyLimit: rapid.SampledFrom([]time.Duration{0, -1, 30 * time.Second, 10 * time.Minute}).Draw(t, "safetyLimit"),
		Policy: rapid.SampledFrom([]expectations.ExpiryPolicy{
			expectations.ExpireAfterTTL, expectations.NeverExpire, expectations.EvidenceFirst, 7,
		}).Draw(t, "policy"),
	}
	m := &trackerModel{
		clk:     fakeclock.New(epoch),
		policy:  opts.Policy,
		ttl:     opts.TTL,
		safety:  opts.SafetyLimit,
		records: map[string]*modelRecord{},
	}
	if m.ttl <= 0 {
		m.ttl = expectations.DefaultTTL
	}
	if m.safety <= 0 {
		m.safety = expectations.DefaultSafetyLimit
	}
	m.safety = max(m.safety, m.ttl)
	m.limits = []time.Duration{m.ttl, m.safety, opts.SafetyLimit}
	opts.Clock = m.clk
	opts.Gate = new(expectations.Gate) // a Gate without caches: writes, no evidence
	if rapid.Bool().Draw(t, "cacheVersion") {
		m.cache = &fakeCache{rv: rapid.SampledFrom(modelRVs).Draw(t, "cacheRV")}
		opts.Gate = podsGate(m.cache.Version)
	}
	if rapid.Bool().Draw(t, "hooks") {
		m.hooks = &hookRecorder{}
		opts.Hooks.Resolved = m.hooks.resolved
	}
	m.tr = expectations.New(opts)
	return m
}

func drawKey(t *rapid.T) string { return rapid.SampledFrom(modelKeys).Draw(t, "key") }
func drawPodKey(t *rapid.T) string {
	return rapid.SampledFrom(modelPodKeys).Draw(t, "podKey")
}
func drawPodKeys(t *rapid.T) []string {
	return rapid.SliceOfN(rapid.SampledFrom(modelPodKeys), 0, 6).Draw(t, "podKeys")
}
func drawCount(t *rapid.T, label string) int { return rapid.IntRange(-2, 4).Draw(t, label) }

func keySet(keys []string) map[string]bool {
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	return set
}

// rvNumber parses a well-formed resourceVersion of the model's pool: a
// positive decimal without leading zeros.
func rvNumber(rv string) (uint64, bool) {
	if rv == "" || rv[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

// startRound models Set/Expect*: counters, timestamp, no write evidence
// the deletion key set untouched.
func (m *trackerModel) startRound(key string, adds, dels int) *modelRecord {
	r := m.records[key]
	if r == nil {
		r = &modelRecord{}
		m.records[key] = r
	}
	r.adds, r.dels, r.since = adds, dels, m.clk.Now()
	r.writeRV, r.writeBad = "", false
	r.pendingSeen, r.resolved = !r.fulfilled(), false
	return r
}

func (m *trackerModel) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"Set": func(t *rapid.T) {
			key, adds, dels := drawKey(t), drawCount(t, "adds"), drawCount(t, "dels")
			m.tr.Set(key, adds, dels)
			r := m.startRound(key, adds, dels)
			r.addKeys, r.trackAdds = nil, false
		},
		"ExpectCreations": func(t *rapid.T) {
			key, adds := drawKey(t), drawCount(t, "adds")
			m.tr.ExpectCreations(key, adds)
			r := m.startRound(key, adds, 0)
			r.addKeys, r.trackAdds = nil, false
		},
		"ExpectCreationKeys": func(t *rapid.T) {
			key, podKeys := drawKey(t), drawPodKeys(t)
			m.tr.ExpectCreationKeys(key, podKeys)
			set := keySet(podKeys)
			r := m.startRound(key, len(set), 0)
			r.addKeys, r.trackAdds = set, true
		},
		"ExpectDeletions": func(t *rapid.T) {
			key, podKeys := drawKey(t), drawPodKeys(t)
			m.tr.ExpectDeletions(key, podKeys)
			set := keySet(podKeys) // dedup, replace
			r := m.startRound(key, 0, len(set))
			r.delKeys = set
			r.addKeys = nil // no creation expected any more; trackAdds stays
		},
		"CreationObserved": func(t *rapid.T) {
			key := drawKey(t)
			m.tr.CreationObserved(key)
			if r := m.records[key]; r != nil {
				r.adds--
			}
		},
		"CreationObservedKey": func(t *rapid.T) {
			key, podKey := drawKey(t), drawPodKey(t)
			m.tr.CreationObservedKey(key, podKey)
			r := m.records[key]
			switch {
			case r == nil:
			case !r.trackAdds:
				r.adds--
			case r.addKeys[podKey]:
				delete(r.addKeys, podKey)
				r.adds--
			}
		},
		"DeletionObserved": func(t *rapid.T) {
			key, podKey := drawKey(t), drawPodKey(t)
			m.tr.DeletionObserved(key, podKey)
			if r := m.records[key]; r != nil && r.delKeys[podKey] {
				delete(r.delKeys, podKey)
				r.dels--
			}
		},
		"Raise": func(t *rapid.T) {
			key, adds, dels := drawKey(t), drawCount(t, "adds"), drawCount(t, "dels")
			m.tr.Raise(key, adds, dels)
			if r := m.records[key]; r != nil {
				r.adds += adds
				r.dels += dels
				r.pendingSeen = r.pendingSeen || !r.fulfilled()
			}
		},
		"Lower": func(t *rapid.T) {
			key, adds, dels := drawKey(t), drawCount(t, "adds"), drawCount(t, "dels")
			m.tr.Lower(key, adds, dels)
			if r := m.records[key]; r != nil {
				r.adds -= adds
				r.dels -= dels
				r.pendingSeen = r.pendingSeen || !r.fulfilled()
			}
		},
		"Delete": func(t *rapid.T) {
			key := drawKey(t)
			m.tr.Delete(key)
			delete(m.records, key)
		},
		"Wrote": func(t *rapid.T) {
			key, rv := drawKey(t), rapid.SampledFrom(modelRVs).Draw(t, "rv")
			m.tr.Gate().Wrote(key, "", expectations.PodsResource, rv)
			r := m.records[key]
			if r == nil || r.writeBad {
				return
			}
			n, ok := rvNumber(rv)
			switch {
			case !ok:
				r.writeRV, r.writeBad = "", true
			case r.writeRV == "":
				r.writeRV = rv
			default:
				if cur, _ := rvNumber(r.writeRV); n > cur {
					r.writeRV = rv
				}
			}
		},
		"CacheCatchesUp": func(t *rapid.T) {
			if m.cache == nil {
				t.Skip("no pods cache")
			}
			m.cache.rv = rapid.SampledFrom(modelRVs).Draw(t, "cacheRV")
		},
		"Step": func(t *rapid.T) {
			d := rapid.SampledFrom([]time.Duration{
				0, time.Nanosecond, time.Second, m.ttl / 2, m.ttl, m.ttl + time.Nanosecond,
				m.safety, -time.Second,
			}).Draw(t, "step")
			m.clk.Step(d)
		},
		// StepToLimit puts the clock exactly at, just before or just after a
		// time limit of a record's round: the sides of R-2.6's strict
		// comparison, for the TTL and for the safety limit (also as
		// configured, to catch a limit below the TTL that is not raised).
		"StepToLimit": func(t *rapid.T) {
			r := m.records[drawKey(t)]
			if r == nil {
				t.Skip("no record")
			}
			limit := rapid.SampledFrom(m.limits).Draw(t, "limit")
			extra := rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, time.Nanosecond}).Draw(t, "extra")
			m.clk.Set(r.since.Add(limit + extra))
		},
		"": m.check,
	}
}

// want is the model's verdict for key (what Check must return).
func (m *trackerModel) want(key string) expectations.Status {
	r := m.records[key]
	if r == nil {
		return expectations.Status{Satisfied: true, Resolution: expectations.NoRecord}
	}
	age := m.clk.Now().Sub(r.since)
	st := expectations.Status{Adds: r.adds, Dels: r.dels, Age: age}
	verdict := func(satisfied bool, res expectations.Resolution) expectations.Status {
		st.Satisfied, st.Resolution = satisfied, res
		return st
	}
	if r.fulfilled() {
		return verdict(true, expectations.Fulfilled)
	}
	res := m.policyVerdict(r, age)
	return verdict(res.Satisfied, res.Resolution)
}

// policyVerdict is the Tracker's policy on a pending round whose age is
// given.
func (m *trackerModel) policyVerdict(r *modelRecord, age time.Duration) expectations.Status {
	verdict := func(satisfied bool, res expectations.Resolution) expectations.Status {
		return expectations.Status{Satisfied: satisfied, Resolution: res}
	}
	switch m.policy {
	case expectations.NeverExpire:
		return verdict(false, expectations.Waiting)
	case expectations.EvidenceFirst:
		if m.cache != nil && r.writeRV != "" && !r.writeBad {
			write, _ := rvNumber(r.writeRV)
			if cached, ok := rvNumber(m.cache.rv); ok {
				switch {
				case cached >= write:
					return verdict(true, expectations.ResolvedByEvidence)
				case age > m.safety:
					return verdict(true, expectations.Expired)
				default:
					return verdict(false, expectations.WaitingForCache)
				}
			}
		}
	}
	if age > m.ttl {
		return verdict(true, expectations.Expired)
	}
	return verdict(false, expectations.Waiting)
}

// check compares every observable of every key with the model.
func (m *trackerModel) check(t *rapid.T) {
	var wantHooks []resolvedCall
	for _, key := range modelKeys {
		want := m.want(key)
		if got := m.tr.Check(key); got != want {
			t.Fatalf("key %q: Check = %+v, want %+v", key, got, want)
		}
		if r := m.records[key]; r != nil && m.hooks != nil && want.Satisfied && r.pendingSeen && !r.resolved {
			r.resolved = true
			wantHooks = append(wantHooks, resolvedCall{key, want.Resolution, want.Age})
		}
		if got := m.tr.Satisfied(key); got != want.Satisfied {
			t.Fatalf("key %q: Satisfied = %v, Check said %v", key, got, want.Satisfied)
		}

		r := m.records[key]
		adds, dels, ok := m.tr.Pending(key)
		snap, found := m.tr.Snapshot(key)
		if r == nil {
			if ok || adds != 0 || dels != 0 || found {
				t.Fatalf("key %q: no record in the model, Tracker has (%d, %d, %v)", key, adds, dels, ok)
			}
			continue
		}
		if !ok || !found || adds != r.adds || dels != r.dels {
			t.Fatalf("key %q: Pending = (%d, %d, %v), model (%d, %d)", key, adds, dels, ok, r.adds, r.dels)
		}
		if snap.Status != want || !snap.Since.Equal(r.since) || snap.TracksCreations != r.trackAdds ||
			snap.WriteRV != r.writeRV || snap.WriteRVInvalid != r.writeBad {
			t.Fatalf("key %q: Snapshot %+v disagrees with the model %+v (want %+v)", key, snap, *r, want)
		}
		if got, want := snap.DeletionKeys, sortedModelKeys(r.delKeys); !slices.Equal(got, want) {
			t.Fatalf("key %q: DeletionKeys = %v, want %v", key, got, want)
		}
		if got, want := snap.CreationKeys, sortedModelKeys(r.addKeys); !slices.Equal(got, want) {
			t.Fatalf("key %q: CreationKeys = %v, want %v", key, got, want)
		}
	}
	if m.hooks != nil {
		if got := m.hooks.take(); !slices.Equal(got, wantHooks) {
			t.Fatalf("Hooks.Resolved calls = %+v, want %+v", got, wantHooks)
		}
	}
}

func sortedModelKeys(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

// TestTrackerModel checks the Tracker against the model under every policy,
// with tracked creations, write evidence, hooks and clock steps across the
// TTL and safety limit boundaries.
func TestTrackerModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newTrackerModel(t)
		t.Repeat(m.actions())
	})
}
