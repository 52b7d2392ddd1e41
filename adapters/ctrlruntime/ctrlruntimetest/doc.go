// Package ctrlruntimetest runs a [reconcile.Controller] on
// controller-runtime's fake client, for the unit tests of a controller
// built with package ctrlruntime. Its [Env] plays what a manager does
// around the Controller, deterministically and without goroutines:
//
//   - events: every successful create, update, patch and delete of a pod or
//     an owner through Env.Client becomes the event an informer would
//     deliver (PodAdded, PodUpdated, PodDeleted and the owner's), in the
//     order of the writes; the objects the client starts with are added,
//     as an informer's first list. Without them a scale-down after a
//     scale-up waits out the five-minute expectations;
//   - the queue: the owners the events name are reconciled, one at a time,
//     through ctrlruntime.Reconciler, by [Env.Settle], until nothing is
//     left to do now; RequeueAfter and delayed requests wait for
//     Env.Clock, a fake clock the Controller reads (Config.Clock);
//   - the API server's part of a create: a UID and a creation timestamp
//     (Env.Clock's) for an object without them. The fake client itself
//     generates names from generateName.
//
// What it does not model: informer latency (the Controller sees every
// write once Settle or Deliver delivers it, never a stale cache), the
// consistency gate (the Config has no CacheVersions, so
// Expectations.Exact cannot be used), server-side apply and DeleteAllOf
// (they make no event), field indexes (the lookups list the namespace),
// garbage collection, and what the fake client does not (validation,
// admission, delete preconditions). For a real API server, use envtest or
// the repository's test/controlplane; for client-go controllers, package
// adapters/clientgo/fakecluster, whose watches feed real informers.
package ctrlruntimetest
