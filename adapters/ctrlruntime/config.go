package ctrlruntime

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// ConfigOptions tune [NewConfig]. The zero value is upstream's behaviour:
// no labels stamped, one event per pod, the consistency gate on.
// [Production] is the combination we recommend.
type ConfigOptions struct {
	// Production turns on the recommended profile ([Production]): the
	// owned-only, lean pod cache of its stamp (the manager's cache options
	// must come from the same value's [Production.CacheOptions]), exact
	// expectations, status coalescing and one event per batch. The zero
	// Production turns nothing on.
	Production Production
	// OwnedPods gives the labels stamped on every pod created
	// ([PodControl].Labels), for a pod cache restricted to them: the same
	// value whose [OwnedPods.CacheOptions] built the manager's cache
	// options, so that the two cannot disagree. The zero value stamps
	// nothing.
	OwnedPods OwnedPods
	// EventPerBatch records one SuccessfulCreate event per slow-start
	// batch instead of one per pod ([PodControl].EventPerBatch).
	EventPerBatch bool
	// NoCacheVersions leaves Cluster.CacheVersions zero and sets
	// DisableConsistencyGate: no consistency gate (as upstream before
	// v1.36) and no Expectations.Exact. The unsynced-cache guard
	// (Cluster.CachesSynced, R-14.8) stays. It is for a manager cache whose
	// informers expose no store (one restricted to namespaces), on which
	// NewConfig fails otherwise.
	NoCacheVersions bool
	// Recorder records the controller's events: the pod client's (e.g.
	// SuccessfulCreate) and the Warning when the creation breaker stops an
	// owner's creates. Nil, the default: core/v1 Events through a
	// broadcaster NewConfig adds to the manager, as upstream's controllers
	// record them. Set it to record elsewhere (package ctrlruntimetest
	// keeps them in memory); it must be safe for concurrent use.
	Recorder record.EventRecorder
}

// NewConfig returns a [reconcile.Config] for owners of type T (a pointer to
// a type registered in mgr's scheme with its list type) with Kind and
// Cluster filled from mgr: Owners ([NewOwners]: reads through
// mgr.GetClient(), the re-read before adoption through mgr.GetAPIReader(),
// ), Pods (over the client), PodClient ([PodControl] over the client,
// with mgr.GetAPIReader() as its APIReader and opts.OwnedPods' labels as
// its Labels, recording core/v1 Events through a broadcaster that runs
// with mgr, under the source component "<kind>-controller", e.g.
// replicaset-controller as upstream), StatusWriter, Resource (below),
// CacheVersions and CachesSynced (from mgr.GetCache(), [CacheVersions],
// [CachesSynced]), and
// Hooks.CreationsStopped, which records a Warning event on an owner whose
// creates the creation breaker stopped (docs/rules.md ). The caller sets
// Describe and Status (reconcile.ReplicaSets() has upstream's for
// ReplicaSets) and any tuning, then calls [reconcile.NewController] and
// [Register]. NewConfig adds the recorder to mgr as a Runnable (unless
// opts.Recorder replaces it): call it before mgr.Start.
//
// It is the one way the adapter builds a Cluster: package ctrlruntimetest
// calls it too, over the fake client and a cache of its own, so that a
// controller's unit tests run the Config its manager runs.
//
// A manager does not expose the options its cache was built with, so
// NewConfig cannot check that the pod cache selects the pods opts.OwnedPods
// stamps: build the manager's cache options with the same value's
// [OwnedPods.CacheOptions], which refuses a pod selector the stamp does not
// meet.
//
// The consistency gate is on, as in upstream v1.37. A cache restricted to
// namespaces exposes no informer store to read versions from: NewConfig
// then fails, saying to set ConfigOptions.NoCacheVersions.
//
// Resource comes from the client's RESTMapper, or, when it cannot map the
// kind (a CRD not installed yet), the kind's lower-case plural
// (meta.UnsafeGuessKindToResource); it only names the owners' cache in the
// gate's record and errors. A kind the RESTMapper reports cluster-scoped is
// an error matching reconcile.ErrClusterScoped.
func NewConfig[T reconcile.Object](mgr manager.Manager, opts ConfigOptions) (reconcile.Config[T], error) {
	if mgr == nil {
		return reconcile.Config[T]{}, errors.New("ctrlruntime: NewConfig: nil manager")
	}
	if opts.Recorder != nil {
		return newConfig[T](mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), mgr.GetScheme(), opts.Recorder, opts)
	}
	rec := &managerRecorder{config: mgr.GetConfig(), httpClient: mgr.GetHTTPClient(), scheme: mgr.GetScheme()}
	cfg, err := newConfig[T](mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), mgr.GetScheme(), rec, opts)
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	rec.component = strings.ToLower(cfg.Kind.Kind) + "-controller"
	if err := mgr.Add(rec); err != nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: adding the event recorder to the manager: %w", err)
	}
	return cfg, nil
}

// NewClusterConfig is [NewConfig] over c, a controller-runtime
// cluster.Cluster that no manager owns: one the caller builds with
// cluster.New and runs itself, e.g. the caches of one held shard (package
// sharding), which start and stop with the shard. Its Cluster reads and
// writes through c.GetClient(), re-reads through c.GetAPIReader(), and
// takes its versions and sync state from c.GetCache(); c.GetScheme() maps
// T to its Kind. No manager runs an event broadcaster for it, so
// opts.Recorder is required (nil is an error): one whose lifetime is c's,
// safe for concurrent use. Everything else of opts is as for NewConfig,
// whose zero values it shares. It starts nothing: register the indexes
// with [AddIndexes] on c.GetCache() and watch c's cache with [OwnerHandler]
// and [PodHandler] before c.Start. The Config is safe for concurrent use
// as NewConfig's is.
func NewClusterConfig[T reconcile.Object](c cluster.Cluster, opts ConfigOptions) (reconcile.Config[T], error) {
	if c == nil {
		return reconcile.Config[T]{}, errors.New("ctrlruntime: NewClusterConfig: nil cluster")
	}
	if opts.Recorder == nil {
		return reconcile.Config[T]{}, errors.New("ctrlruntime: NewClusterConfig: ConfigOptions.Recorder is required: no manager runs an event broadcaster for a cluster")
	}
	return newConfig[T](c.GetClient(), c.GetAPIReader(), c.GetCache(), c.GetScheme(), opts.Recorder, opts)
}

// newConfig is NewConfig over its parts: c reads (a cache) and writes, live
// reads the API server, informers are the cache's (only for CachesSynced
// under NoCacheVersions), recorder records the events (opts.Recorder is not
// read).
func newConfig[T reconcile.Object](c client.Client, live client.Reader, informers cache.Informers, scheme *runtime.Scheme,
	recorder record.EventRecorder, opts ConfigOptions) (reconcile.Config[T], error) {
	opts, err := opts.Production.apply(opts)
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	owners, err := NewOwners[T](c, live, scheme)
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	obj, err := newOf[T]()
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: %w", err)
	}
	resource, scope := mapKind(c.RESTMapper(), gvks[0])
	if scope == meta.RESTScopeNameRoot {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: %s (%s) is cluster-scoped, by the client's RESTMapper: %w",
			gvks[0].Kind, resource, reconcile.ErrClusterScoped)
	}
	cfg := reconcile.Config[T]{
		Kind: gvks[0],
		Cluster: reconcile.Cluster[T]{
			Owners:       owners,
			Pods:         Pods{Reader: c, index: &podIndex{informers: informers}},
			PodClient:    PodControl{Client: c, APIReader: live, Recorder: recorder, Labels: opts.OwnedPods.Labels(), EventPerBatch: opts.EventPerBatch},
			StatusWriter: StatusWriter[T]{Client: c},
			Resource:     resource,
		},
	}
	cfg.Hooks = podops.StoppedEvents(cfg.Hooks, recorder, cfg.Kind)
	cfg.Cluster.CachesSynced, err = CachesSynced[T](informers)
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	if opts.NoCacheVersions {
		cfg.DisableConsistencyGate = true
		return cfg, nil
	}
	cfg.Cluster.CacheVersions, err = CacheVersions[T](informers)
	if err != nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: the consistency gate (on by default, as upstream v1.37) needs the caches' versions: %w; "+
			"set ConfigOptions.NoCacheVersions to run without it (as upstream before v1.36), or build the manager's cache over all namespaces", err)
	}
	if err := tune(opts.Production, &cfg, informers); err != nil {
		return reconcile.Config[T]{}, err
	}
	return cfg, nil
}

// mapKind maps gvk to its group and resource and its scope with mapper;
// when mapper cannot, the resource is guessed by apimachinery's
// pluralization rule and the scope is "" (unknown).
func mapKind(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (schema.GroupResource, meta.RESTScopeName) {
	if mapper != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			var scope meta.RESTScopeName
			if m.Scope != nil {
				scope = m.Scope.Name()
			}
			return m.Resource.GroupResource(), scope
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource(), ""
}

// newOf returns a new empty T (a pointer type).
func newOf[T reconcile.Object]() (T, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		var zero T
		return zero, fmt.Errorf("ctrlruntime: %v is not a pointer type", typ)
	}
	return reflect.New(typ.Elem()).Interface().(T), nil
}
