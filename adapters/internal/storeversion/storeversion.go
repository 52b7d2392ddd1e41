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

import (
	"errors"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
)

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

// atomicFIFO is client-go's feature gate (v0.36+, on by default) without
// which a store that has LastStoreSyncResourceVersion still answers "".
// It is named by its string: the constant does not exist before v0.36.
const atomicFIFO features.Feature = "AtomicFIFO"

// Active reports whether the informer stores client-go builds in this
// binary track their version: they have LastStoreSyncResourceVersion
// (client-go v0.36 and newer) and client-go's AtomicFIFO feature gate is
// on (its default from v0.36; KUBE_FEATURE_AtomicFIFO=false turns it off).
// When false, every version Of reads is "" and the consistency gate never
// defers. It reads the feature gate on each call and is safe for concurrent
// use.
func Active() bool {
	if !Tracked(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})) {
		return false
	}
	return enabled(atomicFIFO)
}

// enabled reports whether client-go's feature gate f is on; a gate this
// client-go does not know (it panics on those) counts as off.
func enabled(f features.Feature) (on bool) {
	defer func() {
		if recover() != nil {
			on = false
		}
	}()
	return features.FeatureGates().Enabled(f)
}

// TrackedFrom is the first client-go minor version (v0.TrackedFrom) whose
// stores track their version.
const TrackedFrom = 36

// ClientGoMinor returns the minor version of k8s.io/client-go this binary
// was built with (33 for v0.33.0), from its build information, and false
// when the binary carries none or the version is not v0.N.… (a replaced
// or pseudo-versioned client-go still parses). Tests use it to say which
// path each client-go release must take.
func ClientGoMinor() (int, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return 0, false
	}
	for _, dep := range info.Deps {
		if dep.Path != "k8s.io/client-go" {
			continue
		}
		if dep.Replace != nil && dep.Replace.Version != "" {
			dep = dep.Replace
		}
		return minorOf(dep.Version)
	}
	return 0, false
}

// minorOf returns N of "v0.N.…".
func minorOf(version string) (int, bool) {
	rest, ok := strings.CutPrefix(version, "v0.")
	if !ok {
		return 0, false
	}
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	if err != nil {
		return 0, false
	}
	return n, true
}

// ErrUntracked is the reason both adapters' production profiles give when
// store, a pod informer's store, tracks no resourceVersion: client-go
// before v0.36, or its AtomicFIFO feature gate off. Exact expectations
// would then fall back to the TTL without saying so. It returns nil when
// the store tracks its version. The caller prefixes it with its package
// and function.
func ErrUntracked(store cache.Store) error {
	if !Tracked(store) {
		return errors.New("ConfigOptions.Production needs client-go v0.36 or newer: this build's informer stores track no resourceVersion, " +
			"so exact expectations would fall back to the TTL; require k8s.io/client-go v0.36+ or leave the profile out")
	}
	if !Active() {
		return errors.New("ConfigOptions.Production needs client-go's AtomicFIFO feature gate, which is off (KUBE_FEATURE_AtomicFIFO=false?): " +
			"the informer stores track no resourceVersion without it, so exact expectations would fall back to the TTL; turn it on or leave the profile out")
	}
	return nil
}
