// Package cluster is a deterministic, in-memory stand-in for the parts of a
// Kubernetes cluster a ReplicaSet controller touches, for simulation tests
// of the reconcile package (it does not import it).
//
//   - [API] stores pods with API-server semantics: integer resourceVersions
//     as decimal strings (comparable with apimachinery's
//     resourceversion.CompareResourceVersion and internal/rv), uniqueness by
//     namespace/name, generateName suffixes from the API server's alphabet
//     drawn from a seeded generator, AlreadyExists, NotFound and
//     NamespaceTerminating errors from k8s.io/apimachinery/pkg/api/errors,
//     and optional graceful deletion.
//   - [Client] is a PodControl (CreatePod, DeletePod) with fault injection
//     through [Faults]: fail before the write, lose the response after it,
//     or report NamespaceTerminating; it counts every call by outcome.
//   - [Informer] queues every API event and lets the test deliver them late
//     (by age), in order, duplicated or dropped, relist or bookmark; it keeps
//     the cache, calls a [Handler], and reports LastSyncResourceVersion and
//     HasSynced. One from [NewUnsyncedInformer] (Options.Unsynced) has not
//     made its initial list: the pods in the API are invisible to it until
//     the test calls [Informer.InitialList].
//   - [Kubelet] schedules pods, makes them Running and Ready, removes pods
//     whose deletion was requested, and on request finishes a pod
//     (Succeeded or Failed, by its restartPolicy and activeDeadlineSeconds).
//   - Time is a [fakeclock.Clock] that moves only when the test says so.
//
// Why it is not adapters/clientgo/fakecluster, the simulated cluster of the
// examples, the demo and the adapters' tests: the root module may not
// depend on client-go, and the rapid model-based tests here need a cluster
// that moves only when the test says so — which event arrives, when, twice
// or never — where fakecluster runs client-go's own informers on their own
// goroutines. The two share no code: this one models pods only.
//
// What it does not model, honestly:
//   - Only pods are stored. Owners (a ReplicaSet from [NewReplicaSet]) live
//     in the test; there is no ReplicaSet API, no status subresource, no
//     garbage collector, no namespaces as objects (only a "terminating"
//     flag per namespace name).
//   - No selectors, field or label filtering, admission, validation,
//     defaulting, quotas or finalizers beyond the deletion timestamp. The
//     API stores any pod it is given, one without a namespace too, its
//     restartPolicy and activeDeadlineSeconds unchecked.
//   - The kubelet runs no containers: a pod is Running and Ready after one
//     Step, and ends (Succeeded or Failed) only when the test calls
//     [Kubelet.Finish] — never by itself when its activeDeadlineSeconds
//     pass — and no container restarts are counted.
//   - One informer, of pods. HasSynced is this informer's alone; a sync
//     that reads owners from elsewhere (the tests keep them in memory) has
//     no owner cache that could lag or be unsynced. The initial list is
//     one call: a handler never sees a half-listed cache.
//   - Update has no optimistic concurrency (resourceVersion preconditions
//     are ignored) and there is no patch.
//   - One watch stream, delivered in resourceVersion order; no watch
//     expiry (410 Gone) except through an explicit [Informer.Relist], and
//     no tombstones (a vanished pod is reported with its last cached state).
//   - The API answers at once; contexts are not consulted, and a lost
//     response is an error returned after the write, not a hang.
//   - Concurrent creates get generated names in lock order, so which call
//     gets which name (and UID) is not deterministic; the set of names is.
package cluster
