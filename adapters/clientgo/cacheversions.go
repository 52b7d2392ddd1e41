package clientgo

import (
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// CacheVersions returns the [reconcile.CacheVersions] of a controller that
// reads pods from the pods informer and its owners from the owners informer:
// Pods and Owners are each informer store's LastStoreSyncResourceVersion,
// the version of the latest list, event or bookmark the store has applied,
// so a version passes only once a lister can return what was written (the
// reflector's LastSyncResourceVersion can be ahead of the store); Synced
// reports whether both informers have synced (their HasSynced). Set it as
// Config.CacheVersions to turn on the consistency gate, to feed
// the EvidenceFirst policy, and to make Sync refuse to read a cache that
// has not loaded yet (reconcile.ErrNotSynced, R-14.8: a sync on a pod
// cache that has not listed would create every pod again); [ReplicaSets]
// does. [Worker.Synced] makes the worker wait for the same informers
// before its first sync, as upstream's controllers do.
//
// A nil informer gives nil Pods or Owners (that cache never holds a sync
// back) and is left out of Synced, which is nil when both are. The stores
// answer "" while client-go's AtomicFIFO feature is off (it is on by
// default since client-go v0.36), and "" never holds a sync back either.
// Stores track no version before client-go v0.36 (the release that added
// LastStoreSyncResourceVersion): built on v0.33 to v0.35, Pods and Owners
// always answer "", so the gate never defers and EvidenceFirst falls back
// to the TTL, as upstream's controllers on those releases, which have no
// gate; Synced works on every release. The funcs are safe for concurrent
// use.
func CacheVersions(pods, owners cache.SharedInformer) reconcile.CacheVersions {
	return reconcile.CacheVersions{Pods: storeVersion(pods), Owners: storeVersion(owners), Synced: hasSynced(pods, owners)}
}

func storeVersion(inf cache.SharedInformer) func() string {
	if inf == nil {
		return nil
	}
	store := inf.GetStore()
	if store == nil {
		return nil
	}
	return storeversion.Of(store)
}

// hasSynced returns a func that reports whether every non-nil informer of
// infs has synced; nil when there is none.
func hasSynced(infs ...cache.SharedInformer) func() bool {
	var synced []cache.InformerSynced
	for _, inf := range infs {
		if inf != nil {
			synced = append(synced, inf.HasSynced)
		}
	}
	if len(synced) == 0 {
		return nil
	}
	return func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	}
}
