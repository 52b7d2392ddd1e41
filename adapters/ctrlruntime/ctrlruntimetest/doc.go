// Package ctrlruntimetest runs a [reconcile.Controller] on
// controller-runtime's fake client, for the unit tests of a controller
// built with package ctrlruntime. Its [Env] plays what a manager does
// around the Controller, deterministically and without goroutines:
//
//   - the Config: [New] builds it with ctrlruntime.NewConfig itself, the
//     code a manager's controller runs, over a stand-in manager whose
//     client is Env.Client and whose cache is the Env's: the consistency
//     gate's CacheVersions, the unsynced-cache guard, the labels
//     of Options.Config.OwnedPods, the Warning event when the creation
//     breaker stops an owner, and whatever else NewConfig's
//     options turn on are there, so what passes here is what runs, and a
//     Controller with Expectations.Exact builds;
//   - events: every successful create, update, patch and delete of a pod or
//     an owner through Env.Client becomes the event an informer would
//     deliver (PodAdded, PodUpdated, PodDeleted and the owner's), in the
//     order of the writes, applied to the Env's cache as it is delivered;
//     the objects the client starts with are added, as an informer's first
//     list. Without them a scale-down after a scale-up waits out the
//     five-minute expectations. The writes of the kinds in Options.Owns
//     (a Service, a PodDisruptionBudget your reconciler makes) queue their
//     controller, as a builder's Owns does;
//   - the caches' sync: synced at New, as a manager's are when it starts
//     its workers, or, with Options.StartUnsynced, once the first Deliver
//     has delivered the first list;
//   - the queue: the owners the events name are reconciled, one at a time,
//     through ctrlruntime.Reconciler, or through your own reconciler that
//     calls it as one step (Options.NewReconciler, the function
//     ctrlruntime.Options.NewReconciler takes), by [Env.Settle], until nothing is
//     left to do now; RequeueAfter and delayed requests wait for
//     Env.Clock, a fake clock the Controller reads (Config.Clock);
//   - the API server's part of a create: a UID and a creation timestamp
//     (Env.Clock's) for an object without them, and a name for one with
//     only a generateName: the prefix and the next number of that prefix,
//     in the API server's suffix alphabet (web-bbbbb, web-bbbbc, …),
//     skipping taken names. The fake client's own five random characters
//     collide, failing a create with AlreadyExists: for n pods of one
//     owner, with probability 1 − exp(−n(n−1)/(2·27⁵)), 13% at n = 2,000
//     (issue 41 saw 1 run in 8); these names never do, and are the same
//     in every run.
//
// What it does not model, checked against what a kube-apiserver and a
// manager do:
//
//   - Informer latency. The Controller reads pods and owners through the
//     fake client, which is always current: a read never lags a write,
//     only the events wait for Deliver. A stale cache cannot be shown.
//   - resourceVersion semantics. The fake client numbers versions per
//     object ("999" for Options.Objects, "1" at a create, one more at each
//     update), not in one order across a resource, so no version could say
//     whether a cache is older than a write: the Env's caches report none,
//     as client-go's stores before v0.36 do. The consistency gate
//     is wired but never defers, and Exact's evidence falls back to the
//     TTL. An update with a stale resourceVersion does conflict (the fake
//     client checks it).
//   - Watches: there are none. Every event is delivered exactly once, in
//     write order: no bookmarks, relists, 410 Gone, resync, duplicates,
//     drops or tombstones (DeletedFinalStateUnknown).
//   - Label-selected caches. OwnedPods stamps its labels on the pods the
//     Controller creates, but the client lists every pod and every event
//     is delivered: a pod whose labels stop matching an owned-only cache's
//     selector is not seen as deleted, as an API server's label-selected
//     watch reports it. adapters/clientgo/fakecluster models that.
//   - Cache transforms: the managed-fields trim and lean pods of
//     ctrlruntime's cache options are not applied; the Controller reads
//     whole objects.
//   - The pod index. The Env's informers expose no indexer, so the pod
//     lookups list the namespace through the client (the fallback
//     ctrlruntime.Pods takes on a cache without controller-runtime's
//     index), not the PodControllerField index a manager's cache holds.
//   - Field selectors: the fake client answers a list with a field
//     selector only through an index registered with its builder, and the
//     Env registers none.
//   - Admission, validation and defaulting: no webhooks, no
//     ValidatingAdmissionPolicy (the examples' policy keeping the stamp),
//     no CRD schema validation or defaults, no quota or LimitRange.
//   - Graceful deletion: deleting a pod removes it at once, with no
//     deletionTimestamp, grace period or kubelet. Finalizers are the fake
//     client's: deleting an object that has some sets its
//     deletionTimestamp and keeps it until they are removed.
//   - Generation bumps: the fake client does not bump metadata.generation
//     on a spec change; a test of observedGeneration sets it itself.
//   - The status subresource is modelled for pods and the owner type only
//     (a plain update keeps their status, Status().Update changes only
//     it); other kinds' status is written with the object.
//   - Server-side apply: no field ownership or apply conflicts;
//     controller-runtime v0.21's fake client refuses apply patches, and
//     the Client.Apply of later releases, like DeleteAllOf, makes no event.
//   - UID preconditions: a delete's Preconditions.UID is not checked (its
//     ResourceVersion precondition is).
//   - Rate limits and flow control: every call answers at once; no
//     client-side QPS or burst, no 429 or API priority and fairness, no
//     timeouts. Faults are injected through Options.Interceptor.
//   - Garbage collection (an owner's pods outlive it), namespace lifecycle
//     (a create in a terminating namespace succeeds), the scheduler and
//     the kubelet (pods stay Pending until the test writes their status),
//     leader election and fencing.
//   - The workqueue: one reconcile at a time (no MaxConcurrentReconciles),
//     a failed key retried by the next Settle rather than after a
//     rate-limited delay; events are kept in memory as strings, not sent
//     as core/v1 Events (no aggregation or spam filter).
//
// For a real API server, use envtest or the repository's test/controlplane.
//
// Why it exists beside the repository's other in-process API servers:
// adapters/clientgo/fakecluster (client-go's fake clientset with reactors)
// runs client-go's real informers on their own goroutines against
// watches that replay by resourceVersion, honour label selectors and
// delete pods gracefully through a kubelet, which is what a client-go
// controller's tests need; it has no controller-runtime client, so a
// controller built with ctrlruntime.NewConfig cannot run on it. This
// package is that controller's: the controller-runtime client the code
// under test writes through, and a manager's order of events played with
// no goroutine, so a test steps it and asserts between steps. The root
// module's reconcile/internal/cluster (no client-go at all, every event
// delivered when the test says, late, twice or never) serves the
// reconcile package's model-based tests, which may import neither.
package ctrlruntimetest
