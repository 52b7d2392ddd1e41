// Package reconcile is what a controller whose objects own pods needs
// around the reconcilekit primitives: a [Controller] that does upstream's
// ReplicaSet controller work (docs/rules.md §9–§12) for ReplicaSets and custom
// resources alike, and the primitive [Manager] underneath it.
//
// Why: the composition is where controllers go wrong — a Tracker not shared,
// an owner kind unset, expectations never lowered, names leaked after an
// owner is deleted, the status and manage errors returned in the wrong
// order, adoption without the live re-check. A [Controller] is built once
// from a [Config] and owns all of it; an adapter (client-go or
// controller-runtime, in the adapters module) feeds it events and keys.
//
// The two layers:
//   - [Controller]: events ([Controller.PodAdded] … [Controller.OwnerDeleted])
//     return the [Request]s to enqueue; [Controller.Sync] claims, manages,
//     writes the status through Config.WriteStatus and returns one error.
//   - [Manager.ManageReplicas]: create or delete towards the desired count
//     (docs/rules.md §9), for callers that do their own wiring.
//
// Guarantees:
//   - Faithful by default: zero-value tuning follows,
//     deliberate
//     differences are documented on the names they concern.
//   - Read-your-own-writes, as upstream v1.37: given the informer
//     caches' versions (Config.CacheVersions), [Controller.Sync] first
//     defers, reading nothing, while a cache is older than the
//     controller's own last pod create, adoption or status write for the
//     owner, so that no sync acts on a cache that has not seen them — in
//     particular, expectations that expire while the pod informer lags can
//     no longer make it create the pods again. The deferral is an error
//     wrapping *expectations.StaleCacheError, retried by the workqueue.
//     Config.DisableConsistencyGate turns it off, as the feature gate does.
//   - Nothing is forgotten by construction: no default owner kind
//     ([NewController] names a missing field), one clock, one Tracker (its
//     expectations and its record of the controller's writes), and
//     deleting an owner forgets everything about it ([Controller.Len]).
//   - One error per sync; permanent failures satisfy errors.Is(err,
//     [ErrTerminal]); the availability requeue is offered once
//     ([SyncResult].RequeueAfter).
//   - Safe: a pod controlled by another owner is never adopted, released or
//     deleted; at most a burst of creates or deletes per sync; the caller's
//     slices, pods and owners are never modified; bad input is an error
//     prefixed "reconcile:", never a panic.
//   - Deterministic and contained: time comes from a [Clock]; every
//     goroutine is joined before a call returns; a panic in a PodControl is
//     re-raised in the caller's goroutine after the expectations were
//     corrected, with its value unchanged ([Hooks.Panicked] gets the stack
//     of the goroutine that panicked). errgroup lets such panics crash the
//     process; controller-runtime recovers reconciler panics and goes on, so
//     we hand the panic back with the books already right. Nothing logs: [Outcome], [SyncResult] and [Hooks] report.
//
// Beyond upstream, opt-in: Config.TrackCreations (exact expectations by pod
// name, retried names after lost responses), the expectations' evidence
// policies (package expectations), [SyncResult].Expectations saying why an
// owner waits.
package reconcile
