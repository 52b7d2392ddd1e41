// Package reconcile composes the reconcilekit primitives into what a
// controller whose objects own pods needs: a [Controller] that does upstream's
// ReplicaSet controller work for ReplicaSets and custom resources alike, and
// the [Manager] underneath it for callers that do their own wiring.
//
// The one thing to know: build one Controller per controller with
// [NewController]; it owns the expectations, the remembered pod names and the
// record of its own writes. Feed it every pod and owner event
// ([Controller.PodAdded] … [Controller.OwnerDeleted]) and every key to
// [Controller.Sync], which returns one error; permanent failures satisfy
// errors.Is(err, [ErrTerminal]). The adapters module does this for client-go
// and controller-runtime.
//
// Safe with any owner: what kube-apiserver and kube-controller-manager guard
// for a ReplicaSet, Sync guards for every owner kind. An owner spec apps/v1
// would reject ([Owner.Validate]) is a terminal [ErrInvalidSpec] error with
// its status written and no pod touched; a sync on caches that have not
// loaded (Cluster.CachesSynced) is deferred ([ErrDeferred]).
//
// Running several replicas behind a leader lease, set Config.Fence: a replica
// that may have lost its lease then makes no further write, and its syncs fail
// with errors.Is(err, [ErrFenced]) (beyond upstream; the adapters' fencing
// package fills it from client-go's leader election).
//
// A pod cache only the controller reads can hold [LeanPod] copies: every
// rule answers the same on them (beyond upstream; the adapters' LeanPods
// transforms install it).
//
// Zero-value options follow upstream v1.37 (rules R-9.x to R-12.x of the
// repository's docs/rules.md); docs/design/reconcile.md has the longer notes.
package reconcile
