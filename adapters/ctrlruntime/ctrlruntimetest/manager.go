package ctrlruntimetest

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
)

// envManager is the part of a manager ctrlruntime.NewConfig reads, so that
// [New] builds its Config through NewConfig itself, the code a manager's
// controller runs: the Env's client for reads, live reads and writes, and
// its cache for the informers.
//
// The embedded Manager is nil: NewConfig, given a Recorder, calls nothing
// but the four methods below; if it ever did, every test of this package
// would fail on the nil Manager before a user's could.
type envManager struct {
	manager.Manager

	client client.Client
	scheme *runtime.Scheme
	cache  *envCache
}

func (m *envManager) GetClient() client.Client    { return m.client }
func (m *envManager) GetAPIReader() client.Reader { return m.client }
func (m *envManager) GetScheme() *runtime.Scheme  { return m.scheme }
func (m *envManager) GetCache() cache.Cache       { return m.cache }

// envCache is the Env's informer cache: one informer for pods and one for
// the owner type, whose stores hold what [Env.Deliver] has delivered. It
// answers GetInformer only (the embedded Cache is nil), which is what
// ctrlruntime's CacheVersions and pod index ask of a manager's cache.
type envCache struct {
	cache.Cache

	pods   *envInformer
	owners *envInformer
	owner  client.Object // a value of the owner type
}

func newEnvCache(owner client.Object) *envCache {
	synced := &atomic.Bool{}
	return &envCache{
		pods:   newEnvInformer(synced),
		owners: newEnvInformer(synced),
		owner:  owner,
	}
}

// GetInformer returns the informer of pods or of the owner type; any
// other type is an error, as a kind the scheme does not know is for a
// manager's cache.
func (c *envCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	switch {
	case isType(obj, &corev1.Pod{}):
		return c.pods, nil
	case isType(obj, c.owner):
		return c.owners, nil
	}
	return nil, fmt.Errorf("ctrlruntimetest: the Env caches pods and %T only, not %T", c.owner, obj)
}

// apply applies one delivered change to the informer of its type.
func (c *envCache) apply(ch change) {
	obj := ch.cur
	if obj == nil {
		obj = ch.old
	}
	var inf *envInformer
	switch {
	case isType(obj, &corev1.Pod{}):
		inf = c.pods
	case isType(obj, c.owner):
		inf = c.owners
	default:
		return // an owned kind's: no informer of the Controller's holds it
	}
	if ch.cur == nil {
		_ = inf.store.Delete(ch.old)
		return
	}
	_ = inf.store.Update(ch.cur) // a client-go store's Update adds a missing object
}

// markSynced records that the first list has been delivered.
func (c *envCache) markSynced() {
	c.pods.synced.Store(true)
}

func isType(obj, of client.Object) bool {
	return fmt.Sprintf("%T", obj) == fmt.Sprintf("%T", of)
}

// envInformer is one type's informer: HasSynced and the store are what a
// Controller's CacheVersions read; the rest of the Informer interface
// (event handlers, indexes) is not there (the embedded Informer is nil),
// so the Controller's pod lookups list through the client, as they do on
// a manager cache without controller-runtime's index layout.
type envInformer struct {
	cache.Informer

	store  toolscache.Store
	synced *atomic.Bool // shared by the Env's two informers
}

// newEnvInformer returns an informer whose store tracks a version exactly
// when this build's client-go stores do (v0.36 and newer), so that what
// NewConfig accepts or refuses for it (ctrlruntime.Production) is what it
// accepts or refuses for a manager's cache on the same client-go.
func newEnvInformer(synced *atomic.Bool) *envInformer {
	var store toolscache.Store = toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	if storeversion.Tracked(store) {
		store = versionless{Store: store}
	}
	return &envInformer{store: store, synced: synced}
}

// HasSynced reports whether the Env has delivered its first list.
func (i *envInformer) HasSynced() bool { return i.synced.Load() }

// GetStore returns the store of what has been delivered.
func (i *envInformer) GetStore() toolscache.Store { return i.store }

// versionless is a store that reports no resourceVersion, as client-go's
// stores before v0.36 do: the consistency gate never defers, and exact
// expectations decide by the TTL. The fake
// client numbers resourceVersions per object ("1" at create, one more at
// each update), not in one order across objects as an API server does, so
// no version the Env could report would say truthfully whether its cache
// is older than a write.
type versionless struct {
	toolscache.Store
}

// LastStoreSyncResourceVersion returns "": no version to compare.
func (versionless) LastStoreSyncResourceVersion() string { return "" }
