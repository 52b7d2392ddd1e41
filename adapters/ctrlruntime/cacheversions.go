package ctrlruntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// CacheVersions returns the [reconcile.CacheVersions] of a controller for
// owners of type T that reads pods and owners through informers (in a
// manager: mgr.GetCache()): Pods and Owners are each informer store's
// LastStoreSyncResourceVersion, the version of the latest list, event or
// bookmark the cache has applied. [NewConfig] sets it as
// Config.Cluster.CacheVersions, which gives the reconciler
// read-your-own-writes: the consistency gate defers a sync while
// the cache is older than the controller's own pod creates, adoptions or
// status write for that owner, and the EvidenceFirst policy gets the pods'
// version.
//
// controller-runtime's cache.Informer interface has no resource version,
// but its default cache (cache.New, what a manager builds) hands out
// client-go SharedIndexInformers, whose store has one; CacheVersions asserts
// that. It returns an error naming the informer's type when the cache does
// not: a cache restricted to namespaces (cache.Options.DefaultNamespaces,
// or ByObject[…].Namespaces for pods or T) keeps one informer per namespace
// behind a wrapper that exposes no store, and informertest.FakeInformers
// have none either. Set ConfigOptions.NoCacheVersions then (no gate, as
// upstream before 1.36), or build the controller on a cache over all
// namespaces.
//
// Stores track no version before client-go v0.36 (the release that added
// LastStoreSyncResourceVersion): built on v0.33 to v0.35, Pods and Owners
// always answer "", so the gate never defers and EvidenceFirst falls back
// to the TTL, as upstream's controllers on those releases, which have no
// gate.
// Whether the stores track a version is reported by telemetry.FastPaths
// and the gauge reconcilekit_fast_path{path="store_version"}; the tests pin
// it to the client-go release at both ends of the supported range.
//
// It gets (or creates) the two informers without waiting for them to sync;
// creating one asks the API server's discovery for the kind, as the manager
// does when it starts. The funcs are safe for concurrent use.
func CacheVersions[T reconcile.Object](informers cache.Informers) (reconcile.CacheVersions, error) {
	if informers == nil {
		return reconcile.CacheVersions{}, fmt.Errorf("ctrlruntime: CacheVersions: nil informers")
	}
	owner, err := newOf[T]()
	if err != nil {
		return reconcile.CacheVersions{}, err
	}
	pods, err := informerOf(informers, &corev1.Pod{})
	if err != nil {
		return reconcile.CacheVersions{}, err
	}
	owners, err := informerOf(informers, owner)
	if err != nil {
		return reconcile.CacheVersions{}, err
	}
	return reconcile.CacheVersions{Pods: storeversion.Of(pods.store), Owners: storeversion.Of(owners.store)}, nil
}

// CachesSynced returns the unsynced-cache guard of a controller for owners
// of type T that reads pods and owners through informers (in a manager:
// mgr.GetCache()): it reports whether both informers have synced (their
// HasSynced). [NewConfig] sets it as Config.Cluster.CachesSynced: the
// Controller refuses to sync before both caches have loaded
// (reconcile.ErrNotSynced, R-14.8), whoever calls it. It works on every
// cache, one restricted to namespaces included.
//
// In a manager the refusal is a second line: controller-runtime starts a
// controller's workers only once the caches of its watches have synced
// (controller.Options.CacheSyncTimeout), and [Register] watches pods and
// T in mgr.GetCache(), the very informers CachesSynced reads and the
// manager's client (what NewConfig's Owners and Pods read) lists from. It
// holds alone for a Reconciler run outside such a controller, or a client
// that reads another cache.
//
// It gets (or creates) the two informers without waiting for them to sync.
// The func is safe for concurrent use.
func CachesSynced[T reconcile.Object](informers cache.Informers) (func() bool, error) {
	if informers == nil {
		return nil, fmt.Errorf("ctrlruntime: CachesSynced: nil informers")
	}
	owner, err := newOf[T]()
	if err != nil {
		return nil, err
	}
	pods, err := informers.GetInformer(context.Background(), &corev1.Pod{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("ctrlruntime: CachesSynced: the informer of %T: %w", &corev1.Pod{}, err)
	}
	owners, err := informers.GetInformer(context.Background(), owner, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("ctrlruntime: CachesSynced: the informer of %T: %w", owner, err)
	}
	synced := func() bool {
		return pods.HasSynced() && owners.HasSynced()
	}
	return synced, nil
}

// storeInformer is a controller-runtime informer with the client-go store
// behind it.
type storeInformer struct {
	cache.Informer
	store toolscache.Store
}

// informerOf returns obj's informer in informers and its store.
func informerOf(informers cache.Informers, obj client.Object) (storeInformer, error) {
	inf, err := informers.GetInformer(context.Background(), obj, cache.BlockUntilSynced(false))
	if err != nil {
		return storeInformer{}, fmt.Errorf("ctrlruntime: CacheVersions: the informer of %T: %w", obj, err)
	}
	withStore, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return storeInformer{}, fmt.Errorf("ctrlruntime: CacheVersions: the informer of %T is a %T, not a client-go SharedIndexInformer: "+
			"it exposes no store to read its resourceVersion from (a cache restricted to namespaces wraps one informer per namespace)", obj, inf)
	}
	store := withStore.GetStore()
	if store == nil {
		return storeInformer{}, fmt.Errorf("ctrlruntime: CacheVersions: the informer of %T (a %T) has no store", obj, inf)
	}
	return storeInformer{Informer: inf, store: store}, nil
}
