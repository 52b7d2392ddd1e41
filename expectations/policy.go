package expectations

import (
	"fmt"
	"time"
)

// DefaultSafetyLimit is the longest an EvidenceFirst Tracker waits for a
// cache that is behind the controller's own writes, when
// [Options.SafetyLimit] is not set: six times DefaultTTL. An informer that
// lags half an hour is broken rather than slow; past that point proceeding
// (and perhaps over-creating) is preferred to stalling the key forever.
const DefaultSafetyLimit = 30 * time.Minute

// ExpiryPolicy is a Tracker's one answer to "when does a pending
// expectation stop blocking its key" ([Options].Policy): after the TTL
// (ExpireAfterTTL, upstream's), when the evidence says so or after the
// safety limit (EvidenceFirst), or never (NeverExpire). It applies to the
// round as a whole, creations and deletions alike, as upstream's single
// timeout does. A fulfilled record (both counters at most zero) is
// satisfied under every policy, and a key without a record always is.
// Values other than the constants behave as ExpireAfterTTL.
type ExpiryPolicy int

const (
	// ExpireAfterTTL is upstream's policy and the zero value: pending
	// expectations count as satisfied once the round is strictly older than
	// the TTL.
	//
	// Failure mode: when the informer lags by more than the TTL, the
	// controller acts on a stale cache and creates (or deletes) a second
	// time — over-creation (Kubernetes issue #129795). When an event is
	// missed, the key stalls for the whole TTL.
	ExpireAfterTTL ExpiryPolicy = iota

	// NeverExpire blocks until the expectations are observed, or until the
	// key is Deleted or Set again; time plays no part.
	//
	// Failure mode: a single missed event (a dropped watch, a relist that
	// hides a create-then-delete) stalls the key forever, since the
	// controller will not Set it again while it is blocked. Use it only when
	// something else guarantees delivery, or with an operator watching
	// Snapshot.
	NeverExpire

	// EvidenceFirst (beyond upstream) decides pending expectations from
	// evidence when there is some: with a [Gate] in [Options].Gate that has
	// a pods cache, and a pod write recorded in it this round ([Gate.Wrote]
	// with [PodsResource]), a cache that has reached the highest recorded
	// write, yet still lacks the expected events, has missed them: the key
	// is satisfied at once (ResolvedByEvidence) instead of stalling for the
	// TTL. A cache that is behind the write keeps the key waiting
	// (WaitingForCache) even past the TTL, so a slow cache never causes
	// over-creation, until the round is older than the safety limit
	// (Expired). Without usable evidence — no Gate, no pods cache in it, no
	// pod write recorded this round, or a version that does not parse —
	// the TTL applies as under ExpireAfterTTL.
	//
	// Failure modes: it needs the caller to record its writes' versions and
	// a cache version of the same resource; a write left unrecorded can make
	// the evidence claim "missed" while that write's event is still on its
	// way. Deletions carry no evidence unless the caller records their
	// versions (ExpectDeletions starts a round without any), so deletion
	// rounds normally fall back to the TTL. A cache stuck behind for longer
	// than the safety limit proceeds, as ExpireAfterTTL would after the TTL.
	//
	// Which version to pass: the version of the cache the controller lists
	// from. With client-go that is the informer store's
	// (GetIndexer().LastStoreSyncResourceVersion()), which the lister can
	// already see, not the reflector's LastSyncResourceVersion, which may
	// run ahead of the store. The store is updated before event handlers
	// run, so a round may be resolved while its add events still wait in the
	// handler queue; that is safe for the sync, which reads the store, but
	// with counted creations those late events would then lower the next
	// round's counter. Pair EvidenceFirst with tracked creations
	// ([Tracker.ExpectCreationKeys]), whose late events match no key of the
	// next round.
	EvidenceFirst
)

// String returns the policy's name.
func (p ExpiryPolicy) String() string {
	switch p {
	case ExpireAfterTTL:
		return "ExpireAfterTTL"
	case NeverExpire:
		return "NeverExpire"
	case EvidenceFirst:
		return "EvidenceFirst"
	}
	return fmt.Sprintf("ExpiryPolicy(%d)", int(p))
}

// Resolution says why a key is or is not satisfied. The zero value is
// Waiting.
type Resolution int

const (
	// Waiting: not satisfied; expectations are pending and the time limit
	// has not passed (or never does, under NeverExpire).
	Waiting Resolution = iota
	// WaitingForCache: not satisfied; under EvidenceFirst the cache has not
	// yet reached the controller's own recorded writes.
	WaitingForCache
	// NoRecord: satisfied; the key was never set or has been deleted.
	NoRecord
	// Fulfilled: satisfied; both counters are at most zero.
	Fulfilled
	// Expired: satisfied; expectations are still pending, but the round is
	// older than the policy's time limit (the TTL, or the safety limit while
	// the cache is behind).
	Expired
	// ResolvedByEvidence: satisfied; under EvidenceFirst the cache has
	// reached the controller's writes, so the pending events were missed (or
	// are stored but not yet handed to the event handlers: either way the
	// cache a sync reads already holds the writes' effects).
	ResolvedByEvidence
)

// String returns the resolution's name.
func (r Resolution) String() string {
	switch r {
	case Waiting:
		return "Waiting"
	case WaitingForCache:
		return "WaitingForCache"
	case NoRecord:
		return "NoRecord"
	case Fulfilled:
		return "Fulfilled"
	case Expired:
		return "Expired"
	case ResolvedByEvidence:
		return "ResolvedByEvidence"
	}
	return fmt.Sprintf("Resolution(%d)", int(r))
}

// Status is what [Tracker.Check] decides for a key, and why. The zero Status
// is an unsatisfied Waiting one.
type Status struct {
	// Satisfied is what Satisfied returns: the key may sync.
	Satisfied bool
	// Resolution says why the key is or is not satisfied.
	Resolution Resolution

	// Age is how long the key's current round has been running; zero
	// without a record.
	Age time.Duration

	// Adds and Dels are the counters (as Pending returns them).
	Adds, Dels int
}

// Satisfied reports whether a sync of key may act on the cache. With the
// default policy it is true when key has no record (never set, or deleted),
// when both counters are at most zero, or when the record is strictly older
// than the TTL; [ExpiryPolicy] describes the others.
// Membership of the key sets plays no part. It is Check(key).Satisfied
// and may call Hooks.Resolved. It reads the Clock only for a pending record and
// allocates nothing (with nil hooks).
func (t *Tracker) Satisfied(key string) bool {
	return t.check(key, false).Satisfied
}

// Check returns what Satisfied decides for key, and why. It reads the Clock at
// most once (for Age) and, under EvidenceFirst, may call the Gate's pods cache function once. The
// first Check or Satisfied call that finds a round which had pending
// expectations satisfied calls Hooks.Resolved.
func (t *Tracker) Check(key string) Status {
	return t.check(key, true)
}

// view is what a verdict needs from a record, copied under the lock.
type view struct {
	adds, dels int
	since      time.Time
	round      uint64
	writeRV    string
	writeBad   bool
	hookDue    bool
}

// verdict is a Status plus what Snapshot reports about how it was reached.
type verdict struct {
	Status
	limit   time.Duration // the time limit in force; 0 when none applies
	cacheRV string        // the cache version consulted, if any
}

func (t *Tracker) check(key string, wantAge bool) Status {
	t.mu.Lock()
	r := t.records[key]
	if r == nil {
		t.mu.Unlock()
		return Status{Satisfied: true, Resolution: NoRecord}
	}
	v := view{
		adds: r.adds, dels: r.dels, since: r.since,
		writeRV: r.writeRV, writeBad: r.writeBad,
		hookDue: t.opts.Hooks.Resolved != nil && r.pendingSeen && !r.resolved,
	}
	if v.hookDue {
		v.round = r.round
	}
	t.mu.Unlock()

	d := t.judge(&v, wantAge || v.hookDue)
	if d.Satisfied && v.hookDue {
		t.mu.Lock()
		r := t.records[key]
		fire := r != nil && r.round == v.round && !r.resolved
		if fire {
			r.resolved = true
		}
		t.mu.Unlock()
		if fire {
			t.opts.Hooks.Resolved(key, d.Resolution, d.Age)
		}
	}
	return d.Status
}

// judge applies the policy to a record's view. It reads the Clock when the
// record is pending or wantAge is set, and the pods cache when the policy asks
// for evidence.
func (t *Tracker) judge(v *view, wantAge bool) verdict {
	if v.adds <= 0 && v.dels <= 0 {
		d := verdict{Status: Status{Satisfied: true, Resolution: Fulfilled, Adds: v.adds, Dels: v.dels}}
		if wantAge {
			d.Age = t.since(v.since)
		}
		return d
	}
	return t.judgeRound(v, t.since(v.since))
}

// judgeRound applies the Tracker's policy to a pending round as a whole:
// upstream's single timeout for both kinds, or the policy's.
func (t *Tracker) judgeRound(v *view, age time.Duration) verdict {
	d := verdict{Status: Status{Adds: v.adds, Dels: v.dels, Age: age}}
	d.limit = t.timeout()
	switch t.opts.Policy {
	case NeverExpire:
		d.limit = 0
		d.Resolution = Waiting
		return d
	case EvidenceFirst:
		cacheRV, cmp, usable := t.evidence(v.writeRV, v.writeBad)
		if usable {
			d.cacheRV = cacheRV
			if cmp >= 0 {
				d.limit = 0
				d.Satisfied, d.Resolution = true, ResolvedByEvidence
				return d
			}
			d.limit = t.safetyLimit()
			if d.Age > d.limit {
				d.Satisfied, d.Resolution = true, Expired
			} else {
				d.Resolution = WaitingForCache
			}
			return d
		}
	}
	if d.Age > d.limit {
		d.Satisfied, d.Resolution = true, Expired
	} else {
		d.Resolution = Waiting
	}
	return d
}

// safetyLimit is the effective EvidenceFirst limit: never below the TTL.
func (t *Tracker) safetyLimit() time.Duration {
	l := t.opts.SafetyLimit
	if l <= 0 {
		l = DefaultSafetyLimit
	}
	return max(l, t.timeout())
}
