package expectations

import (
	"fmt"
	"time"
)

// Expiry is how long the pending expectations of one kind, creations or
// deletions, keep blocking their key; set it per kind in
// [Options].CreationExpiry and [Options].DeletionExpiry. Build one with
// [ExpireAfter], [ExpireNever] or [ExpireNow].
//
// The zero Expiry defers to the Tracker's TTL and Policy, as upstream's
// single timeout does for both kinds. Beyond upstream, the other values let
// one Tracker time out creations (a create whose event never comes) while
// deletions wait for their events however long they take, or the reverse.
// An Expiry is a small value, safe to copy and to share.
type Expiry struct {
	mode  expiryMode
	after time.Duration
}

type expiryMode uint8

const (
	expiryInherit expiryMode = iota // the zero Expiry: Options.TTL and Options.Policy decide
	expiryAfter
	expiryNever
	expiryNow
)

// ExpireAfter returns the Expiry under which pending expectations of the
// kind stop blocking once they are strictly older than d, whatever the
// Tracker's Policy (no evidence is consulted for the kind). A d of zero or
// less is [ExpireNow].
func ExpireAfter(d time.Duration) Expiry {
	if d <= 0 {
		return ExpireNow()
	}
	return Expiry{mode: expiryAfter, after: d}
}

// ExpireNever returns the Expiry under which pending expectations of the
// kind block until they are observed, or until the key is Deleted or a new
// round replaces them: time plays no part. Its failure mode is
// [NeverExpire]'s: one missed event stalls the key, unless the caller
// looks for the pods itself ([Tracker.Observe]).
func ExpireNever() Expiry {
	return Expiry{mode: expiryNever}
}

// ExpireNow returns the Expiry under which pending expectations of the
// kind never block: they are recorded (PendingKeys, Snapshot, Observe see
// them until the next round) but the key is satisfied as far as the kind is
// concerned, as if they had expired at once.
func ExpireNow() Expiry {
	return Expiry{mode: expiryNow}
}

// String describes e: "inherit", "after 30s", "never" or "now".
func (e Expiry) String() string {
	switch e.mode {
	case expiryAfter:
		return fmt.Sprintf("after %v", e.after)
	case expiryNever:
		return "never"
	case expiryNow:
		return "now"
	}
	return "inherit"
}

// perKind reports whether either kind has its own Expiry, which makes the
// verdict judge creations and deletions apart.
func (t *Tracker) perKind() bool {
	return t.opts.CreationExpiry.mode != expiryInherit || t.opts.DeletionExpiry.mode != expiryInherit
}

// timedOut reports whether expectations of a kind with Expiry e, armed at
// since, are past their time limit at now. It decides by time alone: for
// the zero Expiry it applies the TTL, no limit under NeverExpire, and the
// safety limit under EvidenceFirst (without evidence a round could still be
// waiting for a slow cache until then).
func (t *Tracker) timedOut(e Expiry, since, now time.Time) bool {
	switch e.mode {
	case expiryAfter:
		return now.Sub(since) > e.after
	case expiryNever:
		return false
	case expiryNow:
		return true
	}
	switch t.opts.Policy {
	case NeverExpire:
		return false
	case EvidenceFirst:
		return now.Sub(since) > t.safetyLimit()
	}
	return now.Sub(since) > t.timeout()
}

// dropTimedOut forgets, at now, the pending expectations of each kind that
// are past their time limit, counter and pod keys, so that the new round an
// Add call starts does not arm them again. t.mu must be held.
func (t *Tracker) dropTimedOut(r *record, now time.Time) {
	if r.adds > 0 && t.timedOut(t.opts.CreationExpiry, r.addSince, now) {
		r.adds = 0
		clear(r.addKeys)
	}
	if r.dels > 0 && t.timedOut(t.opts.DeletionExpiry, r.delSince, now) {
		r.dels = 0
		clear(r.delKeys)
		r.nDelKeys = 0
	}
}

// judgeKinds is the verdict when a kind has its own Expiry: each pending
// kind is judged by its Expiry (or, for the zero Expiry, by the policy, as
// a round of that kind alone, armed when the kind was), and the key is
// satisfied when every pending kind is. While it waits, the limit is the
// longest of the waiting kinds' (none if one of them has none); once
// satisfied, Expired wins over ResolvedByEvidence.
func (t *Tracker) judgeKinds(v *view) verdict {
	now := t.now()
	d := verdict{Status: Status{Adds: v.adds, Dels: v.dels, Age: now.Sub(v.since)}}
	kinds := [2]struct {
		pending bool
		expiry  Expiry
		alone   view
	}{
		{v.adds > 0, t.opts.CreationExpiry, view{adds: v.adds, since: v.addSince, writeRV: v.writeRV, writeBad: v.writeBad}},
		{v.dels > 0, t.opts.DeletionExpiry, view{dels: v.dels, since: v.delSince, writeRV: v.writeRV, writeBad: v.writeBad}},
	}
	var waiting, forCache, noLimit, expired bool
	var waitLimit, expiredLimit time.Duration
	for _, k := range kinds {
		if !k.pending {
			continue
		}
		kd := t.judgeKind(k.expiry, &k.alone, now.Sub(k.alone.since))
		if kd.cacheRV != "" {
			d.cacheRV = kd.cacheRV
		}
		switch {
		case !kd.Satisfied:
			waiting = true
			forCache = forCache || kd.Resolution == WaitingForCache
			noLimit = noLimit || kd.limit == 0
			waitLimit = max(waitLimit, kd.limit)
		case kd.Resolution == Expired:
			expired = true
			expiredLimit = max(expiredLimit, kd.limit)
		}
	}
	switch {
	case waiting:
		d.Resolution, d.limit = Waiting, waitLimit
		if forCache {
			d.Resolution = WaitingForCache
		}
		if noLimit {
			d.limit = 0
		}
	case expired:
		d.Satisfied, d.Resolution, d.limit = true, Expired, expiredLimit
	default:
		d.Satisfied, d.Resolution = true, ResolvedByEvidence
	}
	return d
}

// judgeKind judges one kind's pending expectations (v holds that kind's
// counter alone and the time it was armed, age ago) under its Expiry e.
func (t *Tracker) judgeKind(e Expiry, v *view, age time.Duration) verdict {
	var d verdict
	switch e.mode {
	case expiryNow:
		d.Satisfied, d.Resolution = true, Expired
	case expiryNever:
		d.Resolution = Waiting
	case expiryAfter:
		d.limit = e.after
		if age > e.after {
			d.Satisfied, d.Resolution = true, Expired
		} else {
			d.Resolution = Waiting
		}
	default:
		d = t.judgeRound(v, age)
	}
	return d
}
