// Package ctrlruntime runs a [reconcile.Controller] under a controller-runtime
// manager. [NewConfig] fills a [reconcile.Config]'s Kind and Cluster from the
// manager (its client, API reader, cache, scheme and an event recorder), and
// [Register] builds the controller-runtime controller that feeds the
// Controller its pod and owner events and runs its syncs; it returns that
// controller, for more watches. The Examples show both (NewConfig, Register).
//
// The pieces are exported for other wirings: a pod client over a
// client.Client ([PodControl]), owner and pod lookups over a cache with live
// reads through an API reader ([Owners], [Pods]), typed event handlers
// ([PodHandler], [OwnerHandler]), the Reconciler adapter ([Reconciler]), the
// status write ([StatusWriter]), the caches' versions ([CacheVersions]),
// the field indexes ([AddIndexes]) and an owned-only pod cache whose
// selection and the pod client's stamp come from one value ([OwnedPods]). Package ctrlruntimetest runs a
// Controller on controller-runtime's fake client, its events fed, for unit
// tests.
//
// This module's root package and controller-runtime's are both named
// reconcile. A file that needs both imports ours as it is and
// controller-runtime's under another name, as this package does:
// crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile" (the
// Register example does too).
//
// Create and delete semantics are those of the client-go adapter (package
// clientgo): the same events (core/v1, as upstream's), the same UID
// precondition on delete.
//
// The consistency gate is on by default, as in upstream v1.37 and
// in package clientgo: [CacheVersions] reads the versions of the manager's
// informer caches from the client-go informers behind controller-runtime's
// cache.Informer interface (which has none of its own), and a reconcile is
// deferred while a cache is older than the controller's own writes for
// that owner.
//
// No sync acts on a cache that has not loaded: controller-runtime
// starts the workers of the controller [Register] builds only once the
// caches of its watches have synced, and the Controller built from
// [NewConfig] refuses by itself before (CacheVersions.Synced), which the
// [Reconciler] retries with backoff, logged at V(2). An owner kind the
// manager's RESTMapper reports cluster-scoped is refused by NewConfig
// (reconcile.ErrClusterScoped).
//
// [Register] adds two field indexes to the manager's cache ([AddIndexes]):
// pods by controller reference and owners by their controller's UID, so
// that a sync reads the owner's pods, the namespace's orphans and its
// sibling owners only, as upstream's indexers do.
//
// Two fast paths rest on controller-runtime's and client-go's internals:
// the [Pods] NewConfig builds read the pod index inside the default cache
// directly (its name and key layout are controller-runtime's, not its API;
// [Pods.DirectIndex] reports whether they do), and [CacheVersions] reads
// the client-go stores' versions (client-go v0.36 and newer). Each falls
// back to a right answer (a list through the reader; no gate). Their tests
// assert the fast path at both ends of the supported range (make unit,
// make compat), and package telemetry exports which path runs
// (reconcilekit_fast_path); adapters/README.md, "Which path runs".
//
// # Your own Reconcile
//
// An operator whose owner has more than pods (a finalizer, a Service, a
// PodDisruptionBudget: kubebuilder's shape) keeps its own Reconcile and
// runs the pod management as one step of it. Options.NewReconciler makes
// [Register] build that reconciler from the manager's client and the pod
// step, the [Reconciler] it would have run (backoff and metrics set), and
// Options.Owns watches the kinds it owns, as a builder's Owns does. The
// watches of owners and pods stay Register's, so the Controller sees every
// event whatever the Reconcile returns. The Reconcile must:
//
//   - call the pod step on every request, before the rest, not only on
//     changes of the owner: pod events enqueue the owner, and only the pod
//     step acts on them;
//   - join the two outcomes with [Combine]: the sooner requeue, and no
//     terminal error that stops the other step's retry or requeue;
//   - not fear the finalizer: on an owner being deleted the pod step
//     creates, deletes and adopts nothing (reconcile.SyncResult.Deleting),
//     so removing the finalizer after it lets no pod be created for an
//     owner that is gone, and controller-runtime never runs two
//     reconciles of one owner at once.
//
// The guards (the sync guard, the consistency gate, the fence, the
// creation breaker) are inside reconcile.Controller.Sync, so the pod step
// keeps them. Your own writes (the Service, the PDB, the finalizer patch)
// are not the Controller's: with several replicas behind a Lease, fence
// them yourself by calling the same func as Config.Fence (adapters/fencing)
// before each, or a replica that lost its lease can still make them. Package ctrlruntimetest runs the same function
// (ctrlruntimetest.Options.NewReconciler and Owns), and
// examples/webapp is such an operator, with its tests.
package ctrlruntime
