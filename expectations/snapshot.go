package expectations

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Snapshot is a copy of one key's expectations at one instant, for logs and
// debugging: what is still pending, since when, what the policy decides and
// why. It shares no memory with the Tracker. Get one from [Tracker.Snapshot];
// a zero Snapshot prints as a key without a record.
type Snapshot struct {
	// Key is the controller key the snapshot describes.
	Key string

	// Status is what Check would have returned at the same instant
	// (Satisfied, Resolution, Age, Adds, Dels).
	Status

	// DeletionKeys are the pod keys whose deletion is still expected, sorted;
	// nil when there are none.
	DeletionKeys []string

	// CreationKeys are the pod keys whose creation is still expected, sorted,
	// for a key that tracks creations; nil when there are none.
	CreationKeys []string

	// TracksCreations reports that creations are tracked by pod key
	// (ExpectCreationKeys) rather than counted.
	TracksCreations bool

	// Since is when the current round started (the last Set or Expect call);
	// zero without a record.
	Since time.Time

	// Policy is the Tracker's expiry policy and TTL its effective TTL.
	Policy ExpiryPolicy
	TTL    time.Duration

	// Limit is the age at which the pending round stops blocking under the
	// current verdict: the TTL, or the safety limit while the cache is behind
	// (EvidenceFirst); zero when no time limit applies (fulfilled, resolved by
	// evidence, NeverExpire).
	Limit time.Duration

	// WriteRV is the highest pod resourceVersion recorded this round in
	// the Tracker's Gate (Options.Gate, [Gate.Wrote] with [PodsResource]);
	// WriteRVInvalid reports that evidence is unusable this round: a
	// recorded version did not parse, or RecordUnverifiable was called.
	WriteRV        string
	WriteRVInvalid bool

	// CacheRV is the version the Gate's pods cache function returned if
	// the verdict consulted it, else "".
	CacheRV string

	found bool
}

// Snapshot returns a copy of key's expectations with the verdict Check would
// give, and false when key has no record (the Snapshot then says so and is
// satisfied). It reads the Clock once, may call the pods cache function once, and never
// calls hooks.
func (t *Tracker) Snapshot(key string) (Snapshot, bool) {
	snap := Snapshot{
		Key:    key,
		Status: Status{Satisfied: true, Resolution: NoRecord},
		Policy: t.opts.Policy,
		TTL:    t.timeout(),
	}
	t.mu.Lock()
	r := t.records[key]
	if r == nil {
		t.mu.Unlock()
		return snap, false
	}
	v := view{
		adds: r.adds, dels: r.dels, since: r.since,
		writeRV: r.writeRV, writeBad: r.writeBad,
	}
	snap.found = true
	snap.Since, snap.TracksCreations = r.since, r.trackAdds
	snap.WriteRV, snap.WriteRVInvalid = r.writeRV, r.writeBad
	snap.DeletionKeys = sortedKeys(r.delKeys)
	snap.CreationKeys = sortedKeys(r.addKeys)
	t.mu.Unlock()

	d := t.judge(&v, true)
	snap.Status, snap.Limit, snap.CacheRV = d.Status, d.limit, d.cacheRV
	return snap, true
}

// sortedKeys copies set's keys, sorted; nil for an empty set.
func sortedKeys(set map[string]struct{}) []string {
	if len(set) == 0 {
		return nil
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String says in one line whether the key would sync and, if not, what it is
// waiting for, e.g.
//
//	default/web: waiting for 2 creations [default/web-a default/web-b] for 1m0s (expires after 5m0s)
//	default/web: waiting for 1 creation for 2m0s: the cache (RV 118) is behind the controller's writes (RV 120) (gives up after 30m0s)
func (s Snapshot) String() string {
	var b strings.Builder
	b.WriteString(s.Key)
	b.WriteString(": ")
	switch {
	case !s.found || s.Resolution == NoRecord:
		b.WriteString("no expectations recorded (satisfied)")
	case s.Resolution == Fulfilled:
		fmt.Fprintf(&b, "satisfied: all expectations observed (round started %v ago)", s.Age)
	case s.Resolution == Expired:
		fmt.Fprintf(&b, "satisfied: expired after %v (limit %v) with %s still pending", s.Age, s.Limit, s.pending())
	case s.Resolution == ResolvedByEvidence:
		fmt.Fprintf(&b, "satisfied: the cache (RV %s) has reached the controller's writes (RV %s), so the events for %s were missed",
			s.CacheRV, s.WriteRV, s.pending())
	case s.Resolution == WaitingForCache:
		fmt.Fprintf(&b, "waiting for %s for %v: the cache (RV %s) is behind the controller's writes (RV %s) (gives up after %v)",
			s.pending(), s.Age, s.CacheRV, s.WriteRV, s.Limit)
	case s.Limit == 0:
		fmt.Fprintf(&b, "waiting for %s for %v (never expires)", s.pending(), s.Age)
	default:
		fmt.Fprintf(&b, "waiting for %s for %v (expires after %v)", s.pending(), s.Age, s.Limit)
	}
	return b.String()
}

// pending describes the positive counters and the pending deletion keys.
func (s Snapshot) pending() string {
	var parts []string
	if s.Adds > 0 {
		c := plural(s.Adds, "creation")
		if len(s.CreationKeys) > 0 {
			c += " " + keyList(s.CreationKeys)
		}
		parts = append(parts, c)
	}
	if s.Dels > 0 {
		d := plural(s.Dels, "deletion")
		if len(s.DeletionKeys) > 0 {
			d += " " + keyList(s.DeletionKeys)
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, " and ")
}

// maxListedKeys bounds how many pod keys String prints, so that a round of
// 500 deletions still fits on one log line.
const maxListedKeys = 5

// keyList renders keys as "[a b c]", eliding all but the first maxListedKeys.
func keyList(keys []string) string {
	if len(keys) <= maxListedKeys {
		return "[" + strings.Join(keys, " ") + "]"
	}
	return fmt.Sprintf("[%s … +%d more]", strings.Join(keys[:maxListedKeys], " "), len(keys)-maxListedKeys)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
