package expectations

import (
	"maps"
	"slices"
)

// AddCreationKey adds the pod key podKey ("namespace/name") to key's
// expected creations, for a controller that records one pod at a time, just
// before or after each create, instead of the whole set at once
// (ExpectCreationKeys). Deletions pending under key stay pending, so one key
// can wait for creations and deletions at once.
//
// If a creation is still pending (the creation counter is positive),
// podKey joins the expected keys and the counter rises by one unless podKey
// was already expected; a key that counted creations (Set, ExpectCreations)
// starts tracking them, and keeps the creations it counted, which only
// CreationObserved, Lower or the TTL can then settle. Otherwise the expected
// creations start afresh: podKey alone, a counter of 1 (a counter driven
// negative by extra observations does not absorb the new creation).
//
// Like every Expect call it restarts key's TTL and forgets the write
// evidence recorded so far (a new round), so record the create's write with
// [Gate.Wrote] after this call. Creating a record for a key without one is
// fine. CreationObservedKey settles podKey. Safe for concurrent use.
func (t *Tracker) AddCreationKey(key, podKey string) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
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
	t.startRound(r, adds, r.dels, now)
	t.mu.Unlock()
}

// AddDeletionKey adds the pod key podKey ("namespace/name") to key's
// expected deletions, for a controller that records one pod at a time
// instead of the whole set at once (ExpectDeletions). Creations pending
// under key stay pending, so one key can wait for creations and deletions
// at once.
//
// If a deletion is still pending (the deletion counter is positive), podKey
// joins the expected keys and the counter rises by one unless podKey was
// already expected. Otherwise the expected deletions start afresh: podKey
// alone and a counter of 1, so that neither a negative counter nor a pod key
// left over from an earlier round can settle the new deletion.
//
// Like every Expect call it restarts key's TTL and forgets the write
// evidence recorded so far (a new round). DeletionObserved settles podKey.
// Safe for concurrent use.
func (t *Tracker) AddDeletionKey(key, podKey string) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
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
	t.startRound(r, r.adds, dels, now)
	t.mu.Unlock()
}

// PendingKeys returns the pod keys whose creation (for a key that tracks
// creations) and whose deletion key still expects, each sorted, nil when
// there are none or key has no record. It copies the two sets and nothing
// else: unlike Snapshot it reads neither the clock nor the Gate's caches.
// Safe for concurrent use.
func (t *Tracker) PendingKeys(key string) (creations, deletions []string) {
	t.mu.Lock()
	r := t.records[key]
	if r != nil {
		creations = keysOf(r.addKeys)
		deletions = keysOf(r.delKeys)
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
