// Package storeversion reads how far a client-go informer store has synced,
// on every client-go release the adapters support.
//
// client-go v0.36 added LastStoreSyncResourceVersion to cache.Store: the
// version of the latest list, event or bookmark the store has applied. The
// stores of v0.33 to v0.35 do not track it, and there is no other safe
// reading (the reflector's LastSyncResourceVersion runs ahead of the store),
// so on those releases the store answers "", as a v0.36+ store does while
// client-go's AtomicFIFO feature is off. "" never holds a sync back: the
// controller then runs without the consistency gate, as upstream's
// controllers built on those releases do.
package storeversion

import "k8s.io/client-go/tools/cache"

// versioned is the method client-go v0.36 added to cache.Store. It is
// asserted at run time rather than called through cache.Store, so that the
// adapters build on client-go v0.33 too.
type versioned interface {
	LastStoreSyncResourceVersion() string
}

// Of returns store's LastStoreSyncResourceVersion, or, when store does not
// have the method (client-go before v0.36), a func that always returns "".
// It returns nil for a nil store. The func is safe for concurrent use when
// store is (client-go's stores are).
func Of(store cache.Store) func() string {
	if store == nil {
		return nil
	}
	if v, ok := store.(versioned); ok {
		return v.LastStoreSyncResourceVersion
	}
	return untracked
}

// Tracked reports whether store tracks its version (client-go v0.36 and
// newer): whether Of(store) can ever return something other than "".
func Tracked(store cache.Store) bool {
	_, ok := store.(versioned)
	return ok
}

// untracked is the version of a store that does not track one.
func untracked() string { return "" }
