package expectations

import "github.com/reconcilekit/reconcilekit/internal/rv"

// recordRoundWrite keeps resourceVersion, of a pod the controller wrote
// (handed over by the Gate's Wrote), as evidence of key's current round for
// EvidenceFirst: the round keeps the highest version recorded since the
// last Set or Expect call, in
// resourceversion.CompareResourceVersion order (internal/rv implements it,
// so that the module builds on apimachinery v0.33). A version that does not
// parse (empty, leading zeros, not a number) makes the round's evidence
// unusable: the round then falls back to the TTL, because the cache cannot
// be shown to have passed that write. Without a record it does nothing.
func (t *Tracker) recordRoundWrite(key, resourceVersion string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[key]
	if r == nil || r.writeBad {
		return
	}
	against := r.writeRV
	if against == "" {
		against = resourceVersion // validates resourceVersion alone
	}
	c, err := rv.Compare(resourceVersion, against)
	switch {
	case err != nil:
		r.writeRV, r.writeBad = "", true
	case r.writeRV == "" || c > 0:
		r.writeRV = resourceVersion
	}
}

// RecordUnverifiable marks key's current round as one that no cache version
// can settle: it expects something the cache will never show, such as a
// create the API server refused because the namespace is terminating, which
// a controller counts as done (so that it does not retry into a namespace
// that is going away) although no pod and no event will follow. Evidence is
// then unusable for the round, exactly as after a version that does not
// parse: under EvidenceFirst the round falls back to the TTL, as upstream
// waits, instead of being resolved as a missed event and followed by
// another wave of doomed creates. The next Set or Expect call starts a round
// without the mark. Without a record it does nothing.
func (t *Tracker) RecordUnverifiable(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.records[key]; r != nil {
		r.writeRV, r.writeBad = "", true
	}
}

// evidence compares the cache's version with the round's highest write.
// usable is false when there is nothing to compare (no Gate, no pods cache
// in it, no write recorded, a version that does not parse); otherwise cmp is the comparison
// of the cache version with the write version (< 0: the cache is behind).
func (t *Tracker) evidence(writeRV string, writeBad bool) (cacheRV string, cmp int, usable bool) {
	cache := t.opts.Gate.cache(PodsResource)
	if cache == nil || writeRV == "" || writeBad {
		return "", 0, false
	}
	cacheRV = cache()
	cmp, err := rv.Compare(cacheRV, writeRV)
	return cacheRV, cmp, err == nil
}
