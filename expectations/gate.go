package expectations

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/rv"
)

// PodsResource is the core group's pods resource. Writes recorded under it
// are also the evidence of the [EvidenceFirst] policy, which reads
// Options.Caches[PodsResource].
var PodsResource = schema.GroupResource{Resource: "pods"}

// StaleCacheError is [Tracker.Ready]'s answer while an informer cache is
// older than one of the controller's own writes: the cache of Resource has
// synced to Read, and the controller wrote Written, which is newer. The
// sync should not act on that cache; return the error so that the
// workqueue retries the key with rate limiting, as upstream does.
type StaleCacheError struct {
	Key      string               // the owner key given to Ready
	Resource schema.GroupResource // the resource whose cache is behind
	Written  string               // the newest resourceVersion the controller wrote
	Read     string               // the resourceVersion the cache has synced to
}

// Error says which cache is behind which write.
func (e *StaleCacheError) Error() string {
	return fmt.Sprintf("expectations: owner %s: the %s cache is at resourceVersion %s, older than the controller's own write at %s",
		e.Key, e.Resource, e.Read, e.Written)
}

// gate holds, per owner key, the controller's newest write per resource:
// the consistency gate's records. It lives beside the expectations
// records, not in them, because its lifetime differs: it survives rounds
// and Delete, and ends when the caches catch up or the owner goes.
type gate struct {
	mu      sync.Mutex
	records map[string]*writes // nil until the first Wrote
}

// writes is one owner's gate record.
type writes struct {
	uid types.UID
	// versions is kept sorted by group, then resource, so that Ready reports
	// the same resource every time when several caches are behind.
	versions []written
	gen      uint64 // bumped by every Wrote, so Ready never clears a newer write
}

type written struct {
	resource schema.GroupResource
	rv       string
}

func lessResource(a, b schema.GroupResource) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	return a.Resource < b.Resource
}

// Wrote records one of the controller's own writes on behalf of the owner
// with key and uid: resourceVersion is what the API server returned for an
// object of resource that the controller created, adopted or updated. It
// serves both checks that compare the caches with the controller's writes:
//
//   - the consistency gate ([Tracker.Ready]): per key, the newest
//     resourceVersion written per resource. Newest means later in
//     apimachinery's resourceversion.CompareResourceVersion order; when a
//     version does not parse, the comparison fails and the new version
//     replaces the old one, as upstream does. A uid other than the record's
//     starts a fresh record for that uid (the owner was deleted and
//     recreated under the same name);
//   - under [EvidenceFirst], when resource is [PodsResource], the evidence
//     of key's current round of expectations, if it has one (see
//     [Tracker.Check]).
//
// Record pod creates and adoption patches, and the owner's status write.
// Do not record pod deletes or releases: upstream does not, and a
// released pod no longer names the owner.
func (t *Tracker) Wrote(key string, uid types.UID, resource schema.GroupResource, resourceVersion string) {
	if resource == PodsResource {
		t.recordRoundWrite(key, resourceVersion)
	}
	g := &t.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.records == nil {
		g.records = make(map[string]*writes)
	}
	w := g.records[key]
	if w == nil || w.uid != uid {
		w = &writes{uid: uid}
		g.records[key] = w
	}
	w.gen++
	i := 0
	for i < len(w.versions) && lessResource(w.versions[i].resource, resource) {
		i++
	}
	if i < len(w.versions) && w.versions[i].resource == resource {
		if c, err := rv.Compare(w.versions[i].rv, resourceVersion); err == nil && c >= 0 {
			return // the recorded write is as new or newer
		}
		w.versions[i].rv = resourceVersion
		return
	}
	w.versions = append(w.versions, written{})
	copy(w.versions[i+1:], w.versions[i:])
	w.versions[i] = written{resource, resourceVersion}
}

// Ready is the consistency gate: it reports whether the informer
// caches (Options.Caches) have caught up with every write recorded for key
// by [Tracker.Wrote]. It returns nil when nothing is recorded, or when for
// every recorded resource the cache's version is at least the written one;
// a resource without a cache in Options.Caches, a cache that returns "" (it
// does not track versions) and a pair of versions that cannot be compared
// do not block either. A nil answer clears key's record, so that later
// calls cost one map lookup until the next write (a write recorded while
// Ready was comparing is kept). Otherwise it returns a *[StaleCacheError]
// for the first resource behind, in group/resource order (upstream picks
// one in map order), keeps the record and calls Hooks.Deferred.
//
// Call it first in a sync, before reading anything from the caches; a
// non-nil answer means "do not act yet". It does not allocate when nothing
// is recorded for key. It calls the Caches functions and the hook with no
// lock held. Unlike upstream's store, it may run concurrently with Wrote
// for the same key.
func (t *Tracker) Ready(key string) error {
	g := &t.gate
	g.mu.Lock()
	w := g.records[key]
	if w == nil {
		g.mu.Unlock()
		return nil
	}
	gen := w.gen
	var buf [4]written
	versions := append(buf[:0], w.versions...)
	g.mu.Unlock()

	for _, v := range versions {
		cache := t.opts.Caches[v.resource]
		if cache == nil {
			continue
		}
		read := cache()
		if read == "" {
			continue
		}
		if c, err := rv.Compare(v.rv, read); err == nil && c > 0 {
			e := &StaleCacheError{Key: key, Resource: v.resource, Written: v.rv, Read: read}
			if t.opts.Hooks.Deferred != nil {
				t.opts.Hooks.Deferred(key, e)
			}
			return e
		}
	}
	g.mu.Lock()
	if g.records[key] == w && w.gen == gen {
		delete(g.records, key)
	}
	g.mu.Unlock()
	return nil
}

// ClearWrites drops key's gate record when uid is "" or the record's uid:
// an owner deletion clears the record of the deleted owner only, so that a
// recreated owner's writes survive a late delete event; a sync that finds
// the owner gone clears it whatever its uid. [Tracker.Delete] does
// not touch gate records.
func (t *Tracker) ClearWrites(key string, uid types.UID) {
	g := &t.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.records[key]; w != nil && (uid == "" || w.uid == uid) {
		delete(g.records, key)
	}
}

// Written returns the newest resourceVersion of resource recorded for key
// by [Tracker.Wrote] and not yet cleared, and whether there is one: what
// [Tracker.Ready] waits for.
func (t *Tracker) Written(key string, resource schema.GroupResource) (resourceVersion string, ok bool) {
	g := &t.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.records[key]; w != nil {
		for _, v := range w.versions {
			if v.resource == resource {
				return v.rv, true
			}
		}
	}
	return "", false
}
