// Package reconcile composes the reconcilekit primitives into what a
// controller that owns pods needs: [Manager.ManageReplicas], which creates
// or deletes pods towards the desired count as upstream's manageReplicas
// does (SPEC §9); [Manager.Sync], upstream's syncReplicaSet minus listing and
// API writes (SPEC §10); and [Observer], the pod event handlers that feed
// the expectations (SPEC §11). It serves ReplicaSets ([ReplicaSetOwner]) and
// custom resources alike ([Owner]), with client-go or controller-runtime
// behind a two-method [PodControl]; it imports neither and does not log.
//
// A controller wires it up in three places: its pod informer handlers call
// the [Observer] and enqueue the returned [Request]s; its owner delete
// handler calls [Observer.OwnerDeleted]; its sync handler calls
// [Manager.Sync] with the owner and a function that lists the owner's
// claimed pods, writes the status computed from the [SyncResult] (package
// status), and requeues as the result says. Sync's own error means the sync
// did not run to the end (an invalid request, a failed pod listing) and is
// simply returned; a failed manage step is reported only in
// [SyncResult].ManageErr, which the handler passes to the status
// computation and then returns, after any status write error.
//
// Guarantees:
//   - Faithful by default: with zero-value fields a Manager follows SPEC
//     –R-9.4 (burst of 500, ExpectCreations before the first create,
//     slow-start creates from a batch of 1, NamespaceTerminating counted as
//     success, failed and skipped creates lowered, deletes ranked by
//     package podrank with ranks from related pods and expected by key
//     before any call, all deletes at once, NotFound swallowed, failed
//     deletes lowered by key, diff 0 untouched), R-10.3– and
//
//   - Safe: a victim whose controller ownerRef names another owner is
//     never deleted ([Outcome].NotOwned); one call never makes more than the
//     burst of creates or of deletes; the caller's slices, pods and owner are
//     never modified; invalid input (negative replicas, a template without
//     labels, no owner object) is an error before any call or expectation.
//   - Deterministic: time comes from [Manager].Clock (nil: real time); the
//     returned error lists every failure of a call in call order.
//   - Contained: every goroutine a call starts is joined before it returns; a
//     panic in PodControl is re-raised in the caller's goroutine after the
//     expectations were lowered for the calls that did not succeed.
//   - Observable without logging: [Outcome] says what each call did, [Hooks]
//     report batch sizes, skipped creations and deletion victims with their
//     age ratio.
//
// Deliberate differences from upstream:
//   - Errors: upstream returns one failure of a call, chosen at random; here a
//     single failure is returned as is and several are joined with
//     [errors.Join] in call order (creates by index, deletes by rank).
//   - Nil and duplicate (same [PodKey]) entries of the active pods are
//     ignored; upstream would count them.
//   - Victims controlled by another owner (a controller ownerRef with a
//     different UID) are refused (see above). Orphans, pods without a
//     controller ownerRef, are deleted as given: callers pass pods they
//     claimed or are about to adopt, as upstream's sync does.
//   - The deletion ranking's Now and the victims' age come from the Manager's
//     Clock, not the wall clock; the deletion age ratio is computed in
//     float64 and never divides by zero.
//   - A context already done makes ManageReplicas return its error without
//     any call; upstream has no context.
//
// Beyond upstream, opt-in: [Manager].TrackCreations names new pods in the
// Manager and expects their creation by pod key, so a late, duplicate or
// foreign add event cannot satisfy the wrong round, and retries the names of
// failed creates, so a create whose response was lost meets AlreadyExists
// instead of making an extra pod. Always: created pods' resourceVersions are
// recorded as write evidence (expectations.Tracker.RecordWrite) for the
// Tracker's EvidenceFirst policy, and [SyncResult].Expectations says why an
// owner was or was not satisfied.
package reconcile
