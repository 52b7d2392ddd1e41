package expectations

import (
	"fmt"
	"maps"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/rv"
)

// PodsResource is the core group's pods resource. Pod writes recorded in a
// [Gate] under it are also the evidence of the [EvidenceFirst] policy of
// the Trackers built on that Gate, which compare them with the Gate's
// pods cache (GateOptions.Caches[PodsResource]).
var PodsResource = schema.GroupResource{Resource: "pods"}

// StaleCacheError is [Gate.Ready]'s answer while an informer cache is
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

// GateOptions configures a [Gate]. The zero GateOptions give a Gate that
// records writes and never defers (no cache versions to compare them with).
type GateOptions struct {
	// Caches maps a resource to a function returning the resourceVersion up
	// to which the informer cache of that resource has synced (client-go:
	// the informer store's LastStoreSyncResourceVersion; "" when it does
	// not track one). [Gate.Ready] compares every recorded write with its
	// resource's entry; Caches[PodsResource] is also the evidence of the
	// EvidenceFirst Trackers built on the Gate (Options.Gate). A nil map or
	// a missing entry means no cache: writes of that resource never block
	// Ready and give no evidence. NewGate copies the map; the functions are
	// called with no lock held, each at most once per Ready call (and per
	// Check, Satisfied or Snapshot call of an EvidenceFirst Tracker).
	Caches map[schema.GroupResource]func() string

	// Deferred, when set, is called by every [Gate.Ready] call that finds a
	// cache behind the controller's writes, with the error Ready returns: a
	// deferred sync, as upstream's requeue-skip counter counts them per
	// group and resource (err.Resource). It runs on Ready's goroutine with
	// no lock held, so it must be safe for concurrent use when Ready is
	// called concurrently.
	Deferred func(key string, err *StaleCacheError)
}

// Gate is the consistency gate (read-your-own-writes, R-10.9), the shape of
// upstream v1.37's ConsistencyStore: it holds, per owner key, the owner's
// UID and the controller's newest write per resource ([Gate.Wrote]), and
// answers whether the informer caches have caught up with them
// ([Gate.Ready]). A sync asks Ready first and does not act while it
// answers an error.
//
// Its records have their own lifetime, apart from the expectation rounds
// of a [Tracker]: a record survives rounds and [Tracker.Delete], and ends
// when Ready finds every cache caught up, or when the owner goes
// ([Gate.Clear]). A Tracker built with Options.Gate reads its evidence
// from the Gate: the pod writes recorded here during a round, compared
// with the Gate's pods cache.
//
// The zero Gate is ready to use: it records writes and, having no caches,
// never defers; use [NewGate] to give it caches and a hook. A Gate must not
// be copied after first use. A Gate is safe for concurrent use by any
// number of goroutines; one mutex guards its records, held for a map
// lookup and a few comparisons, never while calling a cache function, a
// hook or a Tracker. Unlike upstream's store, Ready may run concurrently
// with Wrote for the same key.
type Gate struct {
	caches   map[schema.GroupResource]func() string
	deferred func(key string, err *StaleCacheError)

	// mu is one mutex, not shards: docs/design/expectations.md ("One
	// mutex") has the measurement.
	mu      sync.Mutex
	records map[string]*writes // nil until the first Wrote
	// trackers are fed the pod writes. The Gate holds them weakly, so
	// that a Tracker its caller no longer holds is collected and then
	// dropped here (by the next attach), instead of being fed for the
	// Gate's lifetime. The slice is replaced, never written in place, so
	// Wrote can range over a copy of the header without the lock.
	trackers []weak.Pointer[Tracker]
}

// NewGate returns a Gate configured by opts, which it copies. It starts no
// goroutines.
func NewGate(opts GateOptions) *Gate {
	return &Gate{caches: maps.Clone(opts.Caches), deferred: opts.Deferred}
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

// attach makes t receive the pod writes recorded from now on, for as long
// as t is reachable; it drops the Trackers that were collected.
func (g *Gate) attach(t *Tracker) {
	g.mu.Lock()
	defer g.mu.Unlock()
	live := make([]weak.Pointer[Tracker], 0, len(g.trackers)+1)
	for _, w := range g.trackers {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	g.trackers = append(live, weak.Make(t))
}

// cache returns the cache version function of resource, or nil. The map is
// never written after NewGate, so no lock is needed.
func (g *Gate) cache(resource schema.GroupResource) func() string {
	if g == nil {
		return nil
	}
	return g.caches[resource]
}

// Wrote records one of the controller's own writes on behalf of the owner
// with key and uid: resourceVersion is what the API server returned for an
// object of resource that the controller created, adopted or updated.
// Per key, the Gate keeps the newest resourceVersion written per resource.
// Newest means later in apimachinery's
// resourceversion.CompareResourceVersion order; when a version does not
// parse, the comparison fails and the new version replaces the old one, as
// upstream does. A uid other than the record's starts a fresh record for
// that uid (the owner was deleted and recreated under the same name).
//
// When resource is [PodsResource], the write is also handed to every
// Tracker built on this Gate (Options.Gate), as the evidence of key's
// current round of expectations, if it has one (see [EvidenceFirst]).
//
// Record pod creates and adoption patches, and the owner's status write.
// Do not record pod deletes or releases: upstream does not, and a
// released pod no longer names the owner.
func (g *Gate) Wrote(key string, uid types.UID, resource schema.GroupResource, resourceVersion string) {
	g.mu.Lock()
	trackers := g.trackers
	g.record(key, uid, resource, resourceVersion)
	g.mu.Unlock()
	if resource == PodsResource {
		for _, w := range trackers {
			if t := w.Value(); t != nil {
				t.recordRoundWrite(key, resourceVersion)
			}
		}
	}
}

// record keeps resourceVersion in key's record. g.mu must be held.
func (g *Gate) record(key string, uid types.UID, resource schema.GroupResource, resourceVersion string) {
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
// caches (GateOptions.Caches) have caught up with every write recorded for
// key by [Gate.Wrote]. It returns nil when nothing is recorded, or when for
// every recorded resource the cache's version is at least the written one;
// a resource without a cache, a cache that returns "" (it does not track
// versions) and a pair of versions that cannot be compared do not block
// either. A nil answer clears key's record, so that later calls cost one
// map lookup until the next write (a write recorded while Ready was
// comparing is kept). Otherwise it returns a *[StaleCacheError] for the
// first resource behind, in group/resource order (upstream picks one in
// map order), keeps the record and calls GateOptions.Deferred.
//
// Call it first in a sync, before reading anything from the caches; a
// non-nil answer means "do not act yet". It does not allocate when nothing
// is recorded for key. It calls the cache functions and the hook with no
// lock held.
func (g *Gate) Ready(key string) error {
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
		cache := g.caches[v.resource]
		if cache == nil {
			continue
		}
		read := cache()
		if read == "" {
			continue
		}
		if c, err := rv.Compare(v.rv, read); err == nil && c > 0 {
			e := &StaleCacheError{Key: key, Resource: v.resource, Written: v.rv, Read: read}
			if g.deferred != nil {
				g.deferred(key, e)
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

// Clear drops key's record when uid is "" or the record's uid: an owner
// deletion clears the record of the deleted owner only, so that a
// recreated owner's writes survive a late delete event; a sync that finds
// the owner gone clears it whatever its uid. It does not touch
// any Tracker's expectations ([Tracker.Delete] does), and [Tracker.Delete]
// does not touch the Gate.
func (g *Gate) Clear(key string, uid types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.records[key]; w != nil && (uid == "" || w.uid == uid) {
		delete(g.records, key)
	}
}

// Written returns the newest resourceVersion of resource recorded for key
// by [Gate.Wrote] and not yet cleared, and whether there is one: what
// [Gate.Ready] waits for.
func (g *Gate) Written(key string, resource schema.GroupResource) (resourceVersion string, ok bool) {
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
