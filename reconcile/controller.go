package reconcile

import (
	"sync"
	"sync/atomic"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// Controller owns the wiring of a controller whose owners (of type T) own
// pods: the expectations Tracker, the consistency Gate, the names of
// unconfirmed creations, the handling of pod and owner events
// (docs/rules.md §11), claiming and the sync
// (docs/rules.md §10). Informer handlers call its event methods and enqueue
// the returned [SyncRequest]s; workers call [Controller.Sync] with the keys.
//
// Build it with [NewController]; the zero Controller is not usable (its
// methods return nothing or an error). A Controller is safe for concurrent
// use: events from any number of informer goroutines, Sync from any number
// of workers, as long as no two Syncs of the same key run at once — the
// guarantee a workqueue gives.
type Controller[T Object] struct {
	cfg     Config[T]
	tracker *expectations.Tracker
	gate    *expectations.Gate // the Tracker's Options.Gate
	manager *Manager
	breaker breaker // the creation breaker and the pods that left the cache
	// noLiveReads is set once the PodGetter answered errors.ErrUnsupported.
	noLiveReads atomic.Bool

	mu    sync.Mutex
	known map[string]struct{}   // owner keys with any state in tracker or manager
	marks map[string]statusMark // the last status write per owner key, under Config.StatusInterval
}

// NewController validates cfg and returns a Controller built from it. A
// missing required field is an error that names it; there is no default
// Kind. The consistency Gate is built on the caches of
// cfg.Cluster.CacheVersions, calling cfg.Hooks.Deferred; the expectations
// Tracker from
// cfg.Expectations, on that Gate. A combination that cannot work is an
// error that names it: CacheVersions.Owners without Cluster.Resource,
// Expectations.Exact without CacheVersions.Pods. The Config is copied:
// later changes to cfg do not reach the Controller.
func NewController[T Object](cfg Config[T]) (*Controller[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	gate := expectations.NewGate(expectations.GateOptions{Caches: cfg.caches(), Deferred: cfg.Hooks.Deferred})
	tracker := expectations.New(cfg.trackerOptions(gate))
	return &Controller[T]{
		cfg:     cfg,
		tracker: tracker,
		gate:    gate,
		manager: &Manager{
			Pods:           cfg.Cluster.PodClient,
			Expectations:   tracker,
			BurstReplicas:  cfg.BurstReplicas,
			Clock:          cfg.Clock,
			Ranking:        cfg.Ranking,
			SlowStart:      cfg.SlowStart,
			TrackCreations: cfg.Expectations.Exact || cfg.trackCreations,
			NameGenerator:  cfg.nameGenerator,
			Hooks:          cfg.Hooks,
			Fence:          cfg.Fence,
			requireNames:   true,
		},
		known: make(map[string]struct{}),
	}, nil
}

// Tracker returns the Controller's expectations Tracker (configured by
// Config.Expectations), for snapshots ("why is this owner waiting?") and
// metrics. Changing its records by hand defeats the Controller's
// bookkeeping.
func (c *Controller[T]) Tracker() *expectations.Tracker {
	if c == nil {
		return nil
	}
	return c.tracker
}

// Gate returns the Controller's consistency gate (R-10.9; turned off by
// Config.DisableConsistencyGate): the records of
// its own writes per owner, for "what is this owner's sync waiting for?"
// (Gate.Written) and tests. Recording or clearing writes by hand defeats
// the Controller's bookkeeping.
func (c *Controller[T]) Gate() *expectations.Gate {
	if c == nil {
		return nil
	}
	return c.gate
}

// Len returns how many owner keys the Controller holds state for:
// expectation records (counts, key sets, round evidence), records of the
// controller's writes for the consistency gate, or names of
// unconfirmed creations. Deleting an owner ([Controller.OwnerDeleted], or a
// Sync that finds it gone) drops its state, so once every owner is deleted
// Len is 0: a leak test asserts on it. A write record is also dropped by
// the first Sync that finds the caches caught up with it.
func (c *Controller[T]) Len() int {
	if !c.usable() {
		return 0
	}
	c.mu.Lock()
	keys := make([]string, 0, len(c.known))
	for k := range c.known {
		keys = append(keys, k)
	}
	c.mu.Unlock()
	n := 0
	for _, k := range keys {
		if _, _, ok := c.tracker.Pending(k); ok || c.hasWrites(k) || c.manager.hasUncertain(k) || c.breaker.has(k) {
			n++
		}
	}
	return n
}

// hasWrites reports whether the Gate holds a record for key: the
// Controller records writes under pods and Config.Cluster.Resource only.
func (c *Controller[T]) hasWrites(key string) bool {
	if _, ok := c.gate.Written(key, expectations.PodsResource); ok {
		return true
	}
	if c.cfg.Cluster.Resource.Resource == "" {
		return false
	}
	_, ok := c.gate.Written(key, c.cfg.Cluster.Resource)
	return ok
}

// remember notes that the Controller may hold state for key.
func (c *Controller[T]) remember(key string) {
	c.mu.Lock()
	c.known[key] = struct{}{}
	c.mu.Unlock()
}

// forget drops what the Controller holds for key: expectations (counts,
// key sets, round evidence) and names of unconfirmed creations. The Gate's
// record is the caller's to clear first (Gate.Clear, with the UID rule of
// ); when one of another owner UID survives, the key stays known, so
// that Len still counts it.
func (c *Controller[T]) forget(key string) {
	c.tracker.Delete(key)
	c.manager.Forget(key)
	c.breaker.forget(key)
	keep := c.hasWrites(key)
	c.mu.Lock()
	delete(c.marks, key)
	if !keep {
		delete(c.known, key)
	}
	c.mu.Unlock()
}

// usable reports whether c was built by NewController.
func (c *Controller[T]) usable() bool { return c != nil && c.tracker != nil }
