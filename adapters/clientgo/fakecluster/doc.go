// Package fakecluster is an in-process Kubernetes API server for testing
// controllers: client-go's fake clientset, made to behave enough like an API
// server for a controller to be exercised realistically, plus a simulated
// kubelet. Import it from your tests:
//
//	c := fakecluster.New(1, fakecluster.Faults{})
//	factory := informers.NewSharedInformerFactory(c.Clientset, 0)
//
// Why not the plain fake clientset: it ignores generateName (every create
// without a name stores a pod named "", so a ReplicaSet controller makes 1 of
// 5 pods and meets AlreadyExists after that), hands out no UIDs or
// resourceVersions, and its watches replay out of order. This package fixes
// those, as listed below.
//
// What it adds to [fake.NewSimpleClientset] (through reactors, so the
// clientset, its informers and watches are the real client-go ones):
//   - creates: a create without a name gets one from its generateName
//     (prefix + 5 random characters); every object gets a UID, a creation
//     timestamp and generation 1, and a pod phase defaults to Pending;
//   - resourceVersions: every write stamps a monotonically increasing
//     resourceVersion on the object, and every list carries the latest one
//     (on every client-go release the adapters support; the tracker does
//     the same from v0.36), so an informer's LastSyncResourceVersion is meaningful;
//     an update whose resourceVersion is stale fails with 409 Conflict;
//   - subresources: an update of "status" changes only the status, a plain
//     update keeps the stored status, and a ReplicaSet spec change bumps
//     metadata.generation;
//   - patches (JSON, merge, strategic merge) with uid/resourceVersion
//     preconditions;
//   - graceful pod deletion: deleting a scheduled pod sets its
//     deletionTimestamp; the [Kubelet] removes it a little later. Deleting an
//     unscheduled pod (or with a zero grace period) removes it at once. Every
//     removal is preceded by a MODIFIED event carrying a fresh resourceVersion,
//     so an informer's resourceVersion never goes backwards;
//   - fault injection at configurable rates ([Faults]);
//   - watches from a resourceVersion replay the writes made since, in
//     version order (the last 4096 writes per resource are kept; an older
//     version fails with 410 Gone, and a reflector relists), as an API
//     server's watch cache does;
//   - watch flow control: a write waits while any watcher's buffer is nearly
//     full (the fake watcher panics when its 100-event buffer overflows);
//   - label-selected watches, as the fake clientset's lists select by
//     label: a watch with a label selector hears only of the objects that
//     match, and an object whose labels stop matching reaches it as
//     DELETED (with the labels it matched with and the write's
//     resourceVersion), as an API server's watch cache sends it, so an
//     owned-only pod cache (clientgo.NewOwnedPods' Factory) drops the pod.
//
// What it does not model: admission, validation, defaulting, field
// selectors (lists and watches both ignore them), garbage collection of
// dependents, finalizers, watch bookmarks, server-side apply, rate limits,
// and network latency. Every call is serialized by the fake clientset's
// own lock.
//
// Why it exists beside the repository's other in-process API servers:
// client-go controllers need the real client-go informers, watching
// through a real clientset, which this package gives them, with watches
// that replay by resourceVersion and select by label and graceful pod
// deletion through its [Kubelet]. Package
// adapters/ctrlruntime/ctrlruntimetest is the controller-runtime client's
// counterpart (a controller built with ctrlruntime.NewConfig writes
// through that client, which this package does not offer, and its events
// are stepped by the test with no goroutine); the root module's
// reconcile/internal/cluster may not import client-go and delivers each
// event when a model-based test says. The three share no code.
package fakecluster
