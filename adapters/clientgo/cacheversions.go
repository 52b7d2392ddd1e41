package clientgo

import (
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// CacheVersions returns the [reconcile.CacheVersions] of a controller that
// reads pods from the pods informer and its owners from the owners informer:
// each func is the informer store's LastStoreSyncResourceVersion, the
// version of the latest list, event or bookmark the store has applied, so a
// version passes only once a lister can return what was written (the
// reflector's LastSyncResourceVersion can be ahead of the store). Set it as
// Config.CacheVersions to turn on the consistency gate and to feed
// the EvidenceFirst policy; [ReplicaSets] does.
//
// A nil informer gives a nil func (that cache never holds a sync back). The
// stores answer "" while client-go's AtomicFIFO feature is off (it is on by
// default since client-go v0.36), and "" never holds a sync back either.
// Stores track no version before client-go v0.36 (the release that added
// LastStoreSyncResourceVersion): built on v0.33 to v0.35, the funcs always
// answer "", so the gate never defers and EvidenceFirst falls back to the
// TTL, as upstream's controllers on those releases, which have no gate.
// The funcs are safe for concurrent use.
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
