package clientgo

import (
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// CacheVersions returns the [reconcile.CacheVersions] of a controller that
// reads pods from the pods informer and its owners from the owners
// informer: Pods and Owners are each informer store's
// LastStoreSyncResourceVersion (a version passes only once a lister can
// return what was written). Set it as Config.Cluster.CacheVersions to turn
// on the consistency gate and to feed exact expectations'
// evidence; [ReplicaSets] does. A nil informer gives a nil func. Built on
// client-go v0.33 to v0.35, whose stores track no version, Pods and Owners
// answer "" and the gate never defers, as upstream on those releases.
// Whether this binary's stores track a version is reported by
// telemetry.FastPaths and the gauge
// reconcilekit_fast_path{path="store_version"}. The funcs are safe for
// concurrent use. Why the store's version and not the reflector's:
// docs/design/cache-versions.md.
func CacheVersions(pods, owners cache.SharedInformer) reconcile.CacheVersions {
	return reconcile.CacheVersions{Pods: storeVersion(pods), Owners: storeVersion(owners)}
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

// CachesSynced returns the unsynced-cache guard of a controller that reads
// the informers given (its pods' and its owners'): a func that reports
// whether every non-nil one has synced (its HasSynced). Set it as
// Config.Cluster.CachesSynced, which is required: Sync then refuses a
// cache that has not loaded (reconcile.ErrNotSynced, R-14.8), whoever
// calls it; [ReplicaSets] does. With no non-nil informer it returns nil,
// which NewController refuses. The func is safe for concurrent use.
func CachesSynced(infs ...cache.SharedInformer) func() bool {
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
