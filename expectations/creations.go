package expectations

// ExpectCreationKeys expects the creation of each distinct pod key in podKeys
// ("namespace/name", R-1.7), for a controller that names its pods itself
// before creating them. It is ExpectCreations(key, number of distinct keys)
// plus the set of keys: duplicates collapse, the set replaces any previous
// one, the deletion counter becomes 0, the TTL restarts and the write
// evidence is forgotten. Like ExpectCreations it leaves the pending deletion
// keys in place. The Tracker copies what it needs; podKeys is neither
// kept nor modified.
//
// Beyond upstream: after it, CreationObservedKey counts an add event only for
// an expected key, once, so a duplicate or late add event, or a pod created by
// someone else, cannot satisfy the round. The key keeps tracking creations
// until the next Set or ExpectCreations.
func (t *Tracker) ExpectCreationKeys(key string, podKeys []string) {
	now := t.now()
	t.mu.Lock()
	r := t.upsert(key)
	r.addKeys = fill(r.addKeys, podKeys)
	r.trackAdds = true
	t.startRound(r, len(r.addKeys), 0, now)
	t.mu.Unlock()
}

// CreationObservedKey records that the pod podKey was seen created, or that
// its tracked create failed. For a key that tracks creation keys
// (ExpectCreationKeys) it lowers the creation counter only if podKey is still
// expected, and removes it, so each expected creation counts exactly once;
// other pod keys change nothing. For a key that counts creations it is
// CreationObserved(key). Without a record it does nothing. It does not
// allocate.
func (t *Tracker) CreationObservedKey(key, podKey string) {
	t.mu.Lock()
	if r := t.records[key]; r != nil {
		if !r.trackAdds {
			r.adds--
		} else if _, ok := r.addKeys[podKey]; ok {
			delete(r.addKeys, podKey)
			r.adds--
		}
	}
	t.mu.Unlock()
}
