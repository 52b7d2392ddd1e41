package expectations

import "github.com/reconcilekit/reconcilekit/internal/rv"

// RecordWrite remembers resourceVersion, returned by one of the controller's
// own writes (a create response, say) in key's current round, as evidence for
// the EvidenceFirst policy. The Tracker keeps the highest version recorded
// since the last Set or Expect call, ordered as apimachinery's
// resourceversion.CompareResourceVersion (v0.35 and later) orders them; the
// module implements that order itself so that it builds on apimachinery v0.33.
// A version that does not parse (empty, leading zeros, not a number) makes
// the round's evidence unusable: the round then falls back to the TTL,
// because the cache cannot be shown to have passed that write. Without a
// record RecordWrite does nothing.
//
// Record every write of a round before the next Check of the key: evidence
// covers only the writes it was given. The versions must belong to the
// resource whose informer CacheVersion reports (pods, for pod creates).
func (t *Tracker) RecordWrite(key, resourceVersion string) {
	s, h := t.shardFor(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.lookup(h, key)
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

// evidence compares the cache's version with the round's highest write.
// usable is false when there is nothing to compare (no CacheVersion, no write
// recorded, a version that does not parse); otherwise cmp is the comparison
// of the cache version with the write version (< 0: the cache is behind).
func (t *Tracker) evidence(writeRV string, writeBad bool) (cacheRV string, cmp int, usable bool) {
	if t.opts.CacheVersion == nil || writeRV == "" || writeBad {
		return "", 0, false
	}
	cacheRV = t.opts.CacheVersion()
	cmp, err := rv.Compare(cacheRV, writeRV)
	return cacheRV, cmp, err == nil
}
