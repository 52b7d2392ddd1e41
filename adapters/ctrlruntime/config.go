package ctrlruntime

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// NewConfig returns a [reconcile.Config] for owners of type T with the
// client-side fields filled: Kind (from scheme), Resource (below), Owners
// ([NewOwners] over c and live), Pods (over c), Control and Patcher
// ([PodControl] over c, with recorder, which may be nil), StatusWriter
// ([StatusWriter] over c) and CacheVersions (from informers). In a manager
// pass mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache() and
// mgr.GetScheme(). The caller sets Describe and Status (and any tuning)
// before [reconcile.NewController].
//
// The consistency gate is on, as in upstream v1.37: a sync waits while a
// cache is older than the controller's own writes for that owner; set
// DisableConsistencyGate to turn it off. Its versions come from informers
// ([CacheVersions]), which also gives Exact (tracked creations with
// evidence) the pod version it needs. A cache whose informers expose no
// store (a cache restricted to namespaces) is an error, returned here once,
// that says how to run without the gate: pass nil informers, and the Config
// has no CacheVersions and DisableConsistencyGate set (upstream before
// v1.36).
//
// Resource, the owners' group and resource under which the status writes
// are recorded for the gate, comes from c's RESTMapper; when it cannot map
// the kind (a fake client's empty mapper, a CRD not installed yet), it is
// the kind's lower-case plural by apimachinery's rule
// (meta.UnsafeGuessKindToResource: PodSet → podsets, Policy → policies). It
// only names the owners' cache in the gate's record and errors, so a wrong
// guess changes no decision.
//
// An owner kind the RESTMapper reports cluster-scoped is an error that says
// so and matches reconcile.ErrClusterScoped: pods are namespaced,
// and a cluster-scoped owner's sync would list and adopt pods in every
// namespace while its creates fail. When the mapper cannot tell, the
// Controller's Sync refuses a key without a namespace anyway (terminal,
// reading and writing nothing).
func NewConfig[T reconcile.Object](c client.Client, live client.Reader, informers cache.Informers, scheme *runtime.Scheme, recorder events.EventRecorder) (reconcile.Config[T], error) {
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
			Pods:         Pods{Reader: c},
			PodClient:    PodControl{Client: c, Recorder: recorder},
			StatusWriter: StatusWriter[T]{Client: c},
			Resource:     resource,
		},
	}
	if informers == nil {
		cfg.Consistency.Disable = true
		return cfg, nil
	}
	cfg.Cluster.CacheVersions, err = CacheVersions[T](informers)
	if err != nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: the consistency gate (on by default, as upstream v1.37) needs the caches' versions: %w; "+
			"pass nil informers to run without it (as upstream before v1.36), or build the controller on a cache over all namespaces", err)
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
