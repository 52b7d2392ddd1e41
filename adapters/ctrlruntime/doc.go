// Package ctrlruntime connects a [reconcile.Controller] to controller-runtime:
// a pod control and patcher over a client.Client ([PodControl]), owner and
// pod lookups over the manager's cache with live reads through its API
// reader ([Owners], [Pods]), typed event handlers that feed the Controller and
// enqueue reconcile.Requests ([PodHandler], [OwnerHandler]), the Reconciler
// adapter ([Reconciler]), the status write ([StatusWriter]) and a builder
// helper ([Register]). [NewConfig] fills every client-side field of a
// [reconcile.Config], the consistency gate's cache versions included:
//
//	cfg, err := ctrlruntime.NewConfig[*v1alpha1.PodSet](mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), mgr.GetScheme(), recorder)
//	cfg.Describe = describe // owner facts of a PodSet
//	cfg.Status = status     // the PodSet status, computed (a pure function)
//	c, err := reconcile.NewController(cfg)
//	err = ctrlruntime.Register(mgr, "podset", c)
//
// Create and delete semantics are those of the client-go adapter (package
// clientgo): the same events, the same UID precondition on delete.
//
// [CacheVersions] reads the versions of the manager's informer caches from
// the client-go informers behind controller-runtime's cache.Informer
// interface (which has none of its own), for the consistency gate, on by
// default as in upstream v1.37 and in package clientgo: a reconcile is
// deferred while the cache is older than the controller's own writes for
// that owner.
//
// No sync acts on a cache that has not loaded: controller-runtime
// starts the workers of the controller [Register] builds only once the
// caches of its watches (pods and T, in the manager's cache the client
// reads) have synced, and the Controller built from [NewConfig] with the
// manager's cache refuses by itself before (CacheVersions.Synced), which
// the [Reconciler] turns into a rate-limited requeue logged at V(2). An
// owner kind the manager's RESTMapper reports cluster-scoped is refused by
// NewConfig (reconcile.ErrClusterScoped).
//
// [Register] adds two field indexes to the manager's cache ([AddIndexes]):
// pods by controller reference and owners by their controller's UID, so
// that a sync reads the owner's pods, the namespace's orphans and its
// sibling owners only, as upstream's indexers do.
package ctrlruntime
