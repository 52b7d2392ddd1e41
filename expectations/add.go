package expectations

import (
	"maps"
	"slices"
)

// AddCreationKey adds the pod key podKey ("namespace/name") to key's
// expected creations, for a controller that records one pod at a time,
// just before or after each create, instead of the whole set at once
// (ExpectCreationKeys). Deletions pending under key stay pending. Expired
// expectations of either kind are forgotten first; if a creation is still
// pending, podKey joins the expected keys (the counter rises by one unless
// podKey was already expected), otherwise the creations start afresh with
// podKey alone. Like every Expect call it starts a new round (the TTL
// restarts and the write evidence is forgotten), so record the create's
// write with [Gate.Wrote] after this call. CreationObservedKey settles
// podKey. A key without a record is fine. Safe for concurrent use. The
// rules for counted keys, negative counters and per-kind expiry:
// docs/design/pod-keys.md.
func (t *Tracker) AddCreationKey(key, podKey string) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
	t.dropTimedOut(r, now)
	if r.adds <= 0 {
		r.adds = 0
		clear(r.addKeys)
	}
	if !r.trackAdds {
		clear(r.addKeys)
		r.trackAdds = true
	}
	if r.addKeys == nil {
		r.addKeys = make(map[string]struct{}, 1)
	}
	adds := r.adds
	if _, ok := r.addKeys[podKey]; !ok {
		r.addKeys[podKey] = struct{}{}
		adds++
	}
	delSince := r.delSince
	t.startRound(r, adds, r.dels, now)
	r.delSince = delSince // the deletions pending are not armed again
	t.mu.Unlock()
}

// AddDeletionKey adds the pod key podKey ("namespace/name") to key's
// expected deletions, for a controller that records one pod at a time
// instead of the whole set at once (ExpectDeletions). Creations pending
// under key stay pending, so one key can wait for creations and deletions
// at once.
//
// Pending expectations of either kind that are past their time limit are
// forgotten first, as AddCreationKey does. If a deletion is still pending
// (the deletion counter is positive), podKey joins the expected keys and the counter rises by one unless podKey was
// already expected. Otherwise the expected deletions start afresh: podKey
// alone and a counter of 1, so that neither a negative counter nor a pod key
// left over from an earlier round can settle the new deletion.
//
// Like every Expect call it restarts key's TTL and forgets the write
// evidence recorded so far (a new round); under a per-kind Expiry it re-arms
// the deletions only. DeletionObserved settles podKey.
// Safe for concurrent use.
func (t *Tracker) AddDeletionKey(key, podKey string) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
	t.dropTimedOut(r, now)
	if r.dels <= 0 {
		r.dels = 0
		clear(r.delKeys)
		r.nDelKeys = 0
	}
	if r.delKeys == nil {
		r.delKeys = make(map[string]struct{}, 1)
	}
	dels := r.dels
	if _, ok := r.delKeys[podKey]; !ok {
		r.delKeys[podKey] = struct{}{}
		r.nDelKeys++
		dels++
	}
	addSince := r.addSince
	t.startRound(r, r.adds, dels, now)
	r.addSince = addSince // the creations pending are not armed again
	t.mu.Unlock()
}

// PendingKeys returns the pod keys whose creation (for a key that tracks
// creations) and whose deletion key still expects, each sorted, nil when
// there are none or key has no record. A kind past its time limit (by time
// alone: its Expiry, else the TTL, the safety limit under EvidenceFirst)
// has none, though Snapshot still lists them until a new round replaces
// them. It reads the clock once and copies the two sets, and never calls
// the Gate's caches. Safe for concurrent use.
func (t *Tracker) PendingKeys(key string) (creations, deletions []string) {
	now := t.now()
	t.mu.Lock()
	r := t.records[key]
	if r != nil {
		if r.adds > 0 && !t.timedOut(t.opts.CreationExpiry, r.addSince, now) {
			creations = keysOf(r.addKeys)
		}
		if r.dels > 0 && !t.timedOut(t.opts.DeletionExpiry, r.delSince, now) {
			deletions = keysOf(r.delKeys)
		}
	}
	t.mu.Unlock()
	slices.Sort(creations)
	slices.Sort(deletions)
	return creations, deletions
}

// keysOf returns set's keys in no order, nil for an empty set.
func keysOf(set map[string]struct{}) []string {
	if len(set) == 0 {
		return nil
	}
	return slices.AppendSeq(make([]string, 0, len(set)), maps.Keys(set))
}
