package cluster

import (
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Handler receives the informer's notifications, like client-go's
// ResourceEventHandlerFuncs. A nil field ignores that notification. The pods
// are shared with the cache and must be treated as read-only.
type Handler struct {
	OnAdd    func(pod *corev1.Pod)
	OnUpdate func(old, cur *corev1.Pod)
	OnDelete func(pod *corev1.Pod)
}

// InformerStats counts what happened to the informer's events.
type InformerStats struct {
	Delivered  int // events applied to the cache (duplicates included)
	Dropped    int // events discarded by [Informer.Drop] or the DropIf filter
	Duplicated int // copies added by [Informer.Duplicate]
	Relists    int // calls of [Informer.Relist]
}

// Informer models a shared informer's watch, cache and handler: every API
// event is queued, and the test decides when queued events are delivered
// (late, in order), duplicated or dropped. A delivered event updates the
// cache and calls the handler; the cache's LastSyncResourceVersion is the
// resourceVersion of the latest delivered event (or list or bookmark).
//
// Delivery follows client-go's rule by default: an Added or Modified event
// for a key already in the cache is an update (a duplicate of an event is
// therefore an update with an unchanged resourceVersion, which handlers
// treat as a resync); for a key not in the cache it is an add. With Raw
// set, each event is delivered as its own type instead, so a duplicated
// Added event reaches OnAdd twice (modelling at-least-once notification).
//
// An informer from [NewInformer] has listed the API when it is returned; one
// from [NewUnsyncedInformer] has not: until [Informer.InitialList] it has
// not synced ([Informer.HasSynced] is false), its cache is empty, its
// LastSyncResourceVersion is "", and it delivers nothing, as a reflector
// that has not listed yet.
//
// The zero Informer is not usable; use [NewInformer]. Set Handler, Raw and
// DropIf before events flow. Its methods are safe for concurrent use, and
// the handler runs without the informer's lock held, on the goroutine that
// asked for delivery.
type Informer struct {
	Handler Handler
	Raw     bool
	// DropIf, when set, is consulted for every new event as the API emits
	// it (with the API's lock held: it must not call the API); true
	// discards the event, as a watch that missed it would.
	DropIf func(Event) bool

	api   *API
	clock Clock

	mu      sync.Mutex
	synced  bool // the initial list has been made
	pending []Event
	cache   map[string]*corev1.Pod
	index   map[string]map[string]*corev1.Pod // controller key → pod key → pod
	lastRV  int64
	stats   InformerStats
}

// NewInformer lists api into a new cache and watches it from then on: it
// has synced when it is returned. No handler is called for the initial
// list.
func NewInformer(api *API, clock Clock) *Informer {
	inf := NewUnsyncedInformer(api, clock)
	pods, rv := api.List()
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for _, p := range pods {
		inf.storeLocked(Key(p), p)
	}
	inf.lastRV = parseRV(rv)
	inf.discardCoveredLocked()
	inf.synced = true
	return inf
}

// NewUnsyncedInformer returns an informer of api that has not listed yet:
// the pods api holds, and every write until [Informer.InitialList], reach
// its cache only through that list. It queues api's events from the start
// (a watch registered before the list, so that no write is missed); the
// list discards those it covers.
func NewUnsyncedInformer(api *API, clock Clock) *Informer {
	inf := &Informer{api: api, clock: clock, cache: map[string]*corev1.Pod{}, index: map[string]map[string]*corev1.Pod{}}
	api.Watch(inf.enqueue)
	return inf
}

// HasSynced reports whether the informer has made its initial list, like
// client-go's HasSynced: always true for an informer from [NewInformer].
func (i *Informer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.synced
}

// InitialList makes the initial list of an informer from
// [NewUnsyncedInformer]: the cache is filled from a list of the API, the
// handler's OnAdd is called for every pod (as client-go notifies the
// initial list's items), the queued events the list covers are discarded,
// LastSyncResourceVersion becomes the list's and HasSynced true. It
// returns the number of notifications; on an informer that has synced it
// does nothing and returns 0.
func (i *Informer) InitialList() int {
	if i.HasSynced() {
		return 0
	}
	return i.list(false)
}

func (i *Informer) now() time.Time {
	if i.clock == nil {
		return time.Time{}
	}
	return i.clock.Now()
}

func (i *Informer) enqueue(ev Event) {
	drop := i.DropIf != nil && i.DropIf(ev)
	i.mu.Lock()
	defer i.mu.Unlock()
	if drop {
		i.stats.Dropped++
		return
	}
	i.pending = append(i.pending, ev)
}

func (i *Informer) discardCoveredLocked() {
	kept := i.pending[:0]
	for _, ev := range i.pending {
		if parseRV(ev.RV) > i.lastRV {
			kept = append(kept, ev)
		}
	}
	i.pending = kept
}

// Pending returns the queued events, oldest first.
func (i *Informer) Pending() []Event {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]Event(nil), i.pending...)
}

// Len returns the number of queued events.
func (i *Informer) Len() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.pending)
}

// Deliver delivers up to n queued events in order and returns how many it
// delivered.
func (i *Informer) Deliver(n int) int {
	done := 0
	for done < n && i.deliverNext(time.Time{}, false) {
		done++
	}
	return done
}

// DeliverAll delivers every queued event, including events the handler
// causes while it runs, and returns how many it delivered.
func (i *Informer) DeliverAll() int {
	done := 0
	for i.deliverNext(time.Time{}, false) {
		done++
	}
	return done
}

// DeliverOlderThan delivers, in order, the queued events the API emitted at
// least lag ago, stopping at the first younger one, and returns how many it
// delivered. It models an informer running lag behind the API.
func (i *Informer) DeliverOlderThan(lag time.Duration) int {
	cutoff := i.now().Add(-lag)
	done := 0
	for i.deliverNext(cutoff, true) {
		done++
	}
	return done
}

// DeliverOne delivers the oldest queued event if the API emitted it at
// least lag ago, and reports whether it did. A test that lets a worker run
// between two events delivers them one at a time.
func (i *Informer) DeliverOne(lag time.Duration) bool {
	return i.deliverNext(i.now().Add(-lag), true)
}

func (i *Informer) deliverNext(cutoff time.Time, useCutoff bool) bool {
	i.mu.Lock()
	if !i.synced || len(i.pending) == 0 || (useCutoff && i.pending[0].At.After(cutoff)) {
		i.mu.Unlock()
		return false
	}
	ev := i.pending[0]
	i.pending = i.pending[1:]
	key := ev.Key()
	old, cached := i.cache[key]
	if ev.Type == Deleted {
		i.removeLocked(key)
	} else {
		i.storeLocked(key, ev.Pod)
	}
	if rv := parseRV(ev.RV); rv > i.lastRV {
		i.lastRV = rv
	}
	i.stats.Delivered++
	h, raw := i.Handler, i.Raw
	i.mu.Unlock()

	switch {
	case ev.Type == Deleted:
		if h.OnDelete != nil {
			h.OnDelete(ev.Pod)
		}
	case ev.Type == Added && (raw || !cached), ev.Type == Modified && !raw && !cached:
		if h.OnAdd != nil {
			h.OnAdd(ev.Pod)
		}
	default:
		if !cached {
			old = ev.Pod
		}
		if h.OnUpdate != nil {
			h.OnUpdate(old, ev.Pod)
		}
	}
	return true
}

// Peek returns the queued event at index idx (0 is the oldest) and reports
// whether there is one; the event stays queued.
func (i *Informer) Peek(idx int) (Event, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if idx < 0 || idx >= len(i.pending) {
		return Event{}, false
	}
	return i.pending[idx], true
}

// Drop discards the queued event at index idx (0 is the oldest) and reports
// whether there was one. The cache never sees it.
func (i *Informer) Drop(idx int) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if idx < 0 || idx >= len(i.pending) {
		return false
	}
	i.pending = append(i.pending[:idx], i.pending[idx+1:]...)
	i.stats.Dropped++
	return true
}

// Duplicate queues a copy of the event at index idx right behind it and
// reports whether there was one.
func (i *Informer) Duplicate(idx int) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if idx < 0 || idx >= len(i.pending) {
		return false
	}
	ev := i.pending[idx]
	i.pending = append(i.pending, Event{})
	copy(i.pending[idx+2:], i.pending[idx+1:])
	i.pending[idx+1] = ev
	i.stats.Duplicated++
	return true
}

// Bookmark models a watch bookmark: when no event is queued, the cache has
// seen everything up to the API's current resourceVersion, and
// LastSyncResourceVersion moves there. It reports whether it moved; an
// informer that has not synced has no watch to bookmark.
func (i *Informer) Bookmark() bool {
	rv := parseRV(i.api.ResourceVersion())
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.synced || len(i.pending) > 0 || rv <= i.lastRV {
		return false
	}
	i.lastRV = rv
	return true
}

// Relist models a reflector's relist after its watch broke: the cache is
// replaced by a fresh list of the API, the handler is told about every
// difference (OnAdd for new pods, OnUpdate for changed ones, OnDelete with
// the last cached state for vanished ones — where client-go would wrap it
// in a tombstone), queued events the list covers are discarded and
// LastSyncResourceVersion becomes the list's. It returns the number of
// notifications. On an informer that has not synced, it is the
// [Informer.InitialList], counted as a relist.
func (i *Informer) Relist() int { return i.list(true) }

// list replaces the cache by a list of the API and notifies the
// differences; relist says whether to count it in Stats.Relists.
func (i *Informer) list(relist bool) int {
	pods, rv := i.api.List()
	type note struct{ old, cur *corev1.Pod }
	var notes []note
	i.mu.Lock()
	seen := make(map[string]bool, len(pods))
	for _, p := range pods {
		key := Key(p)
		seen[key] = true
		old, ok := i.cache[key]
		switch {
		case !ok:
			notes = append(notes, note{cur: p})
		case old.ResourceVersion != p.ResourceVersion:
			notes = append(notes, note{old: old, cur: p})
		}
		i.storeLocked(key, p)
	}
	for _, key := range sortedKeys(i.cache) {
		if !seen[key] {
			notes = append(notes, note{old: i.cache[key]})
			i.removeLocked(key)
		}
	}
	if r := parseRV(rv); r > i.lastRV {
		i.lastRV = r
	}
	i.discardCoveredLocked()
	i.synced = true
	if relist {
		i.stats.Relists++
	}
	h := i.Handler
	i.mu.Unlock()

	for _, n := range notes {
		switch {
		case n.old == nil && h.OnAdd != nil:
			h.OnAdd(n.cur)
		case n.cur == nil && h.OnDelete != nil:
			h.OnDelete(n.old)
		case n.old != nil && n.cur != nil && h.OnUpdate != nil:
			h.OnUpdate(n.old, n.cur)
		}
	}
	return len(notes)
}

// LastSyncResourceVersion returns the resourceVersion of the cache's view:
// the latest delivered event, list or bookmark, like client-go's
// LastStoreSyncResourceVersion; "" before the initial list.
func (i *Informer) LastSyncResourceVersion() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.synced {
		return ""
	}
	return strconv.FormatInt(i.lastRV, 10)
}

// Pods returns the cached pods in key order. They are shared with the cache:
// read-only.
func (i *Informer) Pods() []*corev1.Pod {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(i.cache))
	for _, key := range sortedKeys(i.cache) {
		out = append(out, i.cache[key])
	}
	return out
}

// ByController returns the cached pods of namespace whose controller
// ownerRef has kind, name and uid, then the namespace's pods without a
// controller ownerRef, each group in key order: what an index by controller
// reference (upstream's PodControllerIndex) answers, in two lookups. They
// are shared with the cache: read-only.
func (i *Informer) ByController(namespace, kind, name string, uid types.UID) []*corev1.Pod {
	i.mu.Lock()
	defer i.mu.Unlock()
	owned := i.index[namespace+"/"+kind+"/"+name+"/"+string(uid)]
	orphans := i.index[namespace]
	out := make([]*corev1.Pod, 0, len(owned)+len(orphans))
	for _, group := range []map[string]*corev1.Pod{owned, orphans} {
		for _, key := range sortedKeys(group) {
			out = append(out, group[key])
		}
	}
	return out
}

// controllerKey is the index key of pod: namespace/kind/name/uid of its
// controller ownerRef, or the namespace for an orphan.
func controllerKey(pod *corev1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return pod.Namespace
	}
	return pod.Namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

// storeLocked puts pod in the cache under key and re-indexes it.
func (i *Informer) storeLocked(key string, pod *corev1.Pod) {
	i.removeLocked(key)
	i.cache[key] = pod
	ck := controllerKey(pod)
	if i.index[ck] == nil {
		i.index[ck] = map[string]*corev1.Pod{}
	}
	i.index[ck][key] = pod
}

// removeLocked drops key from the cache and the index.
func (i *Informer) removeLocked(key string) {
	old, ok := i.cache[key]
	if !ok {
		return
	}
	delete(i.cache, key)
	ck := controllerKey(old)
	delete(i.index[ck], key)
	if len(i.index[ck]) == 0 {
		delete(i.index, ck)
	}
}

// Get returns the cached pod with key "namespace/name".
func (i *Informer) Get(key string) (*corev1.Pod, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	p, ok := i.cache[key]
	return p, ok
}

// Stats returns the event counts so far.
func (i *Informer) Stats() InformerStats {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.stats
}

func sortedKeys(m map[string]*corev1.Pod) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseRV reads a resourceVersion this package produced; anything else is 0.
func parseRV(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
