package expectations_test

import (
	"sync"
	"sync/atomic"
	"time"
)

// This file is a minimal model of the upstream design, written for the
// benchmarks only (SPEC §2–§3): a client-go style thread-safe store (one
// RWMutex over map[string]any, read with GetByKey) of records with atomic
// counters and a timestamp, the wall clock read in Satisfied, and a second
// store of deletion key sets behind its own single mutex. It models the
// locking and memory traffic, not every rule; the Tracker's behaviour is
// pinned by the table and model tests.

// upstreamStore is the threadSafeMap part of a client-go cache.Store.
type upstreamStore struct {
	mu    sync.RWMutex
	items map[string]any
}

func newUpstreamStore() *upstreamStore { return &upstreamStore{items: map[string]any{}} }

func (s *upstreamStore) GetByKey(key string) (any, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	item, ok := s.items[key]
	return item, ok, nil
}

func (s *upstreamStore) Add(key string, obj any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[key] = obj
	return nil
}

func (s *upstreamStore) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, key)
	return nil
}

// upstreamRecord is one controller's counters, updated atomically by
// concurrent observers.
type upstreamRecord struct {
	add, del  atomic.Int64
	key       string
	timestamp time.Time
}

func (r *upstreamRecord) fulfilled() bool { return r.add.Load() <= 0 && r.del.Load() <= 0 }

// upstreamKeySet is one controller's expected deletion keys.
type upstreamKeySet struct {
	key     string
	podKeys map[string]struct{}
}

// upstreamTracker combines the counter store with the separately locked key
// set store, the way the upstream UID-tracking wrapper does.
type upstreamTracker struct {
	counters *upstreamStore

	keySetMu sync.Mutex // one lock for every controller's key set
	keySets  *upstreamStore
}

func newUpstreamTracker() *upstreamTracker {
	return &upstreamTracker{counters: newUpstreamStore(), keySets: newUpstreamStore()}
}

func (u *upstreamTracker) get(key string) *upstreamRecord {
	obj, ok, err := u.counters.GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	return obj.(*upstreamRecord)
}

func (u *upstreamTracker) Set(key string, add, del int) {
	r := &upstreamRecord{key: key, timestamp: time.Now()}
	r.add.Store(int64(add))
	r.del.Store(int64(del))
	_ = u.counters.Add(key, r)
}

func (u *upstreamTracker) ExpectCreations(key string, n int) { u.Set(key, n, 0) }

func (u *upstreamTracker) ExpectDeletions(key string, podKeys []string) {
	u.keySetMu.Lock()
	defer u.keySetMu.Unlock()
	set := make(map[string]struct{}, len(podKeys))
	for _, k := range podKeys {
		set[k] = struct{}{}
	}
	_ = u.keySets.Add(key, &upstreamKeySet{key: key, podKeys: set})
	u.Set(key, 0, len(set))
}

func (u *upstreamTracker) lower(key string, add, del int64) {
	if r := u.get(key); r != nil {
		r.add.Add(-add)
		r.del.Add(-del)
	}
}

func (u *upstreamTracker) Raise(key string, add, del int) { u.lower(key, -int64(add), -int64(del)) }

func (u *upstreamTracker) CreationObserved(key string) { u.lower(key, 1, 0) }

func (u *upstreamTracker) DeletionObserved(key, podKey string) {
	u.keySetMu.Lock()
	defer u.keySetMu.Unlock()
	obj, ok, err := u.keySets.GetByKey(key)
	if err != nil || !ok {
		return
	}
	set := obj.(*upstreamKeySet)
	if _, has := set.podKeys[podKey]; has {
		u.lower(key, 0, 1)
		delete(set.podKeys, podKey)
	}
}

func (u *upstreamTracker) Satisfied(key string) bool {
	r := u.get(key)
	if r == nil {
		return true
	}
	if r.fulfilled() {
		return true
	}
	return time.Since(r.timestamp) > 5*time.Minute
}
