package expectations

import (
	"sync"
	"time"
)

// DefaultTTL is how long a pending expectation blocks its key before it is
// treated as satisfied anyway: upstream's ExpectationsTimeout.
const DefaultTTL = 5 * time.Minute

// Clock tells the Tracker the time. Anything with a Now method fits, including
// the clocks of k8s.io/utils/clock, which the module does not import.
type Clock interface{ Now() time.Time }

// Options configures a [Tracker]. The zero Options reproduce upstream
// Kubernetes exactly; every other field value is a documented opt-in.
//
// When a pending expectation stops blocking its key is one decision,
// Policy, with the one duration that policy reads: TTL under
// ExpireAfterTTL (upstream's), SafetyLimit under EvidenceFirst (and TTL
// when there is no evidence), none under NeverExpire. [ExpiryPolicy]
// describes each choice and its failure mode.
type Options struct {
	// TTL is how long after the last Set or Expect call a key with pending
	// expectations still blocks under ExpireAfterTTL: a record strictly
	// older than TTL counts as satisfied. Zero or negative means
	// DefaultTTL. See Policy for the other policies.
	TTL time.Duration

	// Clock supplies the time for timestamps and expiry. Nil means the real
	// clock (time.Now).
	Clock Clock

	// Policy decides when pending expectations stop blocking: the zero
	// value is ExpireAfterTTL, upstream's behaviour; [ExpiryPolicy] has the
	// others.
	Policy ExpiryPolicy

	// SafetyLimit bounds, under EvidenceFirst only, how long a key waits for
	// a cache that is behind the controller's own writes. Zero or negative
	// means DefaultSafetyLimit; a value below the TTL is raised to the TTL,
	// so that evidence of a slow cache never stops a wait earlier than no
	// evidence would.
	SafetyLimit time.Duration

	// Gate is the consistency gate whose records are this Tracker's
	// evidence under EvidenceFirst: New attaches the Tracker to it, so that
	// every pod write recorded there from then on ([Gate.Wrote] with
	// [PodsResource]) becomes evidence of its key's current round, and the
	// verdict compares it with the Gate's pods cache
	// (GateOptions.Caches[PodsResource]). Nil means no evidence: an
	// EvidenceFirst Tracker then decides every round by the TTL, as
	// ExpireAfterTTL does, and its Snapshots show no WriteRV. Under the
	// other policies the Gate only fills Snapshot.WriteRV. The Gate feeds
	// every Tracker built on it while the caller holds that Tracker; it
	// holds them weakly, so a Tracker built per call and dropped is
	// collected as usual, and the Gate forgets it. The Tracker does not
	// otherwise use the Gate: Ready, Clear and the Gate's lifetimes are the
	// caller's.
	Gate *Gate

	// Hooks are called on notable transitions, for metrics. The zero Hooks
	// call nothing.
	Hooks Hooks
}

// Tracker records, per controller key, how many creations and deletions a
// controller has asked the API for and not yet observed through its informer,
// and which pod keys ("namespace/name") it expects to see deleted (and, opted
// in, created), one round at a time: each Set or Expect call starts a new
// round for its key. It combines upstream's ControllerExpectations and
// UIDTrackingControllerExpectations in one type (docs/rules.md §2–§3). A
// controller that records pods one at a time, per pod group, uses the
// per-pod tracker of package expectations/perpod instead.
//
// The zero Tracker is ready to use, with the real clock, [DefaultTTL] and
// upstream's [ExpireAfterTTL]; use [New] for other Options. A Tracker must
// not be copied after first use. Any string, including "", is a valid key.
//
// A Tracker is safe for concurrent use by any number of goroutines (informer
// handlers and workers alike). One mutex guards its records; every method
// holds it for a map lookup and a few field updates, and never calls the
// Clock, a cache function or a hook while holding it.
type Tracker struct {
	opts Options

	// mu is one mutex, not shards: the measurement that decided it is in
	// docs/design/expectations.md ("One mutex").
	mu      sync.Mutex
	records map[string]*record // nil until the first Set or Expect call
	rounds  uint64             // numbers the rounds started
}

// record is one controller key's expectations for the current round (the
// time since the last Set or Expect call).
type record struct {
	adds, dels int
	since      time.Time // when the round started; refreshed only by Set and Expect* (R-2.7)

	// writeRV is the highest resourceVersion recorded by Wrote for pods this
	// round ("" if none); writeBad is set when one did not parse, which makes
	// the round's evidence unusable.
	writeRV  string
	writeBad bool

	pendingSeen bool // the round has had pending expectations
	resolved    bool // Hooks.Resolved has fired for this round

	// nDelKeys is len(delKeys), so that the repeat deletion observations
	// of terminating pods need not touch the set once it is empty.
	nDelKeys int

	// trackAdds selects tracked creations (ExpectCreationKeys): addKeys holds
	// the pod keys whose creation is still expected. Otherwise creations are
	// counted.
	trackAdds bool
	addKeys   map[string]struct{}

	// delKeys holds the pod keys whose deletion is still expected. It is nil
	// until ExpectDeletions is first called for the key, and survives Set and
	// ExpectCreations.
	delKeys map[string]struct{}

	round uint64 // unique per Tracker, so that a hook fires once per round
}

func (r *record) fulfilled() bool { return r.adds <= 0 && r.dels <= 0 }

// notePending remembers that the round had something pending, which makes its
// first satisfied check a resolution worth a hook call.
func (r *record) notePending() {
	if !r.fulfilled() {
		r.pendingSeen = true
	}
}

// startRound begins a new round in r: counters, timestamp, no write evidence.
// t.mu must be held.
func (t *Tracker) startRound(r *record, adds, dels int, now time.Time) {
	t.rounds++
	r.adds, r.dels, r.since, r.round = adds, dels, now, t.rounds
	r.writeRV, r.writeBad = "", false
	r.pendingSeen, r.resolved = false, false
	r.notePending()
}

// fill empties set (or makes it) and inserts each of keys.
func fill(set map[string]struct{}, keys []string) map[string]struct{} {
	if set == nil {
		set = make(map[string]struct{}, len(keys))
	} else {
		clear(set) // replace, not merge; reusing the map saves an allocation
	}
	for _, k := range keys {
		set[k] = struct{}{}
	}
	return set
}

// New returns a Tracker configured by opts, which it copies, attached to
// opts.Gate if set (see [Options].Gate). It starts no goroutines.
func New(opts Options) *Tracker {
	t := &Tracker{opts: opts}
	if opts.Gate != nil {
		opts.Gate.attach(t)
	}
	return t
}

// Gate returns the Gate given in Options.Gate, or nil: where a caller that
// holds only the Tracker (reconcile's Manager, say) records its pod
// writes, so that they reach this Tracker's evidence.
func (t *Tracker) Gate() *Gate {
	return t.opts.Gate
}

func (t *Tracker) now() time.Time {
	if t.opts.Clock == nil {
		return time.Now()
	}
	return t.opts.Clock.Now()
}

// since returns how long ago start was. On the real clock it reads only the
// monotonic clock (time.Since), which costs half of a time.Now.
func (t *Tracker) since(start time.Time) time.Duration {
	if t.opts.Clock == nil {
		return time.Since(start)
	}
	return t.opts.Clock.Now().Sub(start)
}

func (t *Tracker) timeout() time.Duration {
	if t.opts.TTL <= 0 {
		return DefaultTTL
	}
	return t.opts.TTL
}

// upsert returns key's record, creating an empty one if needed. t.mu must
// be held.
func (t *Tracker) upsert(key string) *record {
	if r := t.records[key]; r != nil {
		return r
	}
	if t.records == nil {
		t.records = make(map[string]*record)
	}
	r := &record{}
	t.records[key] = r
	return r
}

// Set replaces key's counters with adds and dels and restarts its TTL
// . Negative values are stored as given. The pending deletion
// keys, if any, are left in place, as upstream leaves them.
//
// Set starts a new round: it forgets the round's write evidence (Wrote) and
// makes creations counted again, forgetting any creation keys
// (ExpectCreationKeys).
func (t *Tracker) Set(key string, adds, dels int) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
	clear(r.addKeys)
	r.trackAdds = false
	t.startRound(r, adds, dels, now)
	t.mu.Unlock()
}

// ExpectCreations is Set(key, adds, 0): it expects adds creations, zeroes the
// deletion counter and restarts the TTL. It does not clear the
// pending deletion keys. Like Set, it starts a new round with counted
// creations.
func (t *Tracker) ExpectCreations(key string, adds int) {
	t.Set(key, adds, 0)
}

// ExpectDeletions expects the deletion of each distinct pod key in podKeys
// ("namespace/name", R-1.7): duplicates collapse, the set replaces any
// previous one (nothing is merged), the deletion counter becomes the size of
// the set, the creation counter becomes 0 and the TTL restarts.
// A nil or empty podKeys yields a record (0, 0), which is satisfied at once.
// The Tracker copies what it needs; podKeys is neither kept nor modified.
//
// It starts a new round without write evidence. Beyond upstream: because no
// creation is expected any more, it also empties the set of expected creation
// keys of a key that tracks creations (ExpectCreationKeys), so that a late add
// event cannot lower the new round's counter.
func (t *Tracker) ExpectDeletions(key string, podKeys []string) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
	r.delKeys = fill(r.delKeys, podKeys)
	r.nDelKeys = len(r.delKeys)
	clear(r.addKeys)
	t.startRound(r, 0, len(r.delKeys), now)
	t.mu.Unlock()
}

// CreationObserved records that one expected creation was seen: it lowers
// key's creation counter by one if key has a record, and does nothing
// otherwise. It counts even for a key that tracks
// creation keys; use CreationObservedKey there. It does not allocate.
func (t *Tracker) CreationObserved(key string) {
	t.mu.Lock()
	if r := t.records[key]; r != nil {
		r.adds--
	}
	t.mu.Unlock()
}

// DeletionObserved records that the pod podKey ("namespace/name") was seen
// deleted. Only a pod key in key's pending deletion set counts: it leaves the
// set and the deletion counter drops by one. Unknown pods and repeated
// observations of the same pod change nothing, so each expected deletion is
// counted exactly once. It does not allocate.
func (t *Tracker) DeletionObserved(key, podKey string) {
	t.deletionObserved(key, podKey)
}

// deletionObserved is DeletionObserved, reporting whether podKey was
// expected (and so counted).
func (t *Tracker) deletionObserved(key, podKey string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[key]
	if r == nil || r.nDelKeys == 0 {
		return false
	}
	if _, ok := r.delKeys[podKey]; !ok {
		return false
	}
	delete(r.delKeys, podKey)
	r.nDelKeys--
	r.dels--
	return true
}

// Raise adds adds and dels to key's counters if key has a record; otherwise it
// does nothing. It does not restart the TTL and does not
// touch the pending deletion keys.
func (t *Tracker) Raise(key string, adds, dels int) {
	t.mu.Lock()
	if r := t.records[key]; r != nil {
		r.adds += adds
		r.dels += dels
		r.notePending()
	}
	t.mu.Unlock()
}

// Lower subtracts adds and dels from key's counters if key has a record;
// otherwise it does nothing. Counters may go negative. It
// does not restart the TTL and does not touch the pending deletion keys.
func (t *Tracker) Lower(key string, adds, dels int) {
	t.mu.Lock()
	if r := t.records[key]; r != nil {
		r.adds -= adds
		r.dels -= dels
		r.notePending()
	}
	t.mu.Unlock()
}

// Delete forgets key's counters, pending deletion and creation keys and write
// evidence. Afterwards key is satisfied and observations for it are no-ops until
// it is set again.
func (t *Tracker) Delete(key string) {
	t.mu.Lock()
	delete(t.records, key)
	t.mu.Unlock()
}

// Pending returns key's creation and deletion counters. ok is false, and the
// counters zero, when key has no record.
func (t *Tracker) Pending(key string) (adds, dels int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[key]
	if r == nil {
		return 0, 0, false
	}
	return r.adds, r.dels, true
}
