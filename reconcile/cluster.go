package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is an owner as a [Controller] sees it: a *appsv1.ReplicaSet or a
// pointer to a custom resource type.
type Object interface {
	metav1.Object
	runtime.Object
}

// Owners reads the owners of one kind: from the caller's informer cache
// (Get, List) and, for the re-check before adoption, from the API server
// (GetLive). Implementations must be safe for concurrent use; the returned
// objects are only read.
type Owners[T Object] interface {
	// Get returns the cached owner namespace/name, or an error for which
	// k8s.io/apimachinery/pkg/api/errors.IsNotFound holds when there is
	// none.
	Get(namespace, name string) (T, error)
	// List returns every cached owner of the namespace.
	List(namespace string) ([]T, error)
	// GetLive reads the owner from the API server, bypassing the cache:
	// once per sync, before the first adoption.
	GetLive(ctx context.Context, namespace, name string) (T, error)
}

// OwnersByController is an [Owners] that can also look owners up by their
// controller ownerRef's UID, as upstream's controller-UID index of
// ReplicaSets: when Config.Cluster.Owners implements it, the default related lookup
// reads only the owner's siblings, at a cost that grows with them,
// not with the namespace's owners. Without it, the lookup lists the
// namespace's owners (Owners.List) and keeps the same ones, at a cost
// proportional to the namespace's owners, once per sync that deletes pods.
type OwnersByController[T Object] interface {
	Owners[T]
	// ListByController returns the cached owners of namespace whose
	// controller ownerRef has uid, in any order.
	ListByController(namespace string, uid types.UID) ([]T, error)
}

// Pods lists pods from the caller's informer cache. Implementations must be
// safe for concurrent use; the pods are the caller's and are never modified.
// List and ListByController should return each pod once, as one read of an
// informer's store does. Sync does not check on every sync: a pod listed
// twice (a ListByController made of two index lookups can see a pod
// released between them under both keys) counts twice in SyncResult.Active
// and the status, and can make the manage step create fewer pods, never
// more; the pod's update event brings the next sync. Before deleting, Sync
// drops repeats, so they never cost a live pod. Nil entries are skipped.
//
// A Pods that is also a [PodsByController] lets Sync read only the owner's
// pods and the namespace's orphans: implement it over an index
// whenever one exists.
type Pods interface {
	// List returns every pod of the namespace, in any state. Sync calls
	// it when the Pods is not a [PodsByController], or the owner is
	// cluster-scoped, and keeps the pods ListByController would return;
	// the default related lookup calls it once per sync that deletes pods
	// and keeps the pods the siblings' selectors match, as upstream
	// . Its cost is proportional to the namespace's pods.
	List(namespace string) ([]*corev1.Pod, error)
}

// PodsByController is a [Pods] that can also look pods up by their
// controller ownerRef, as upstream's pod index by controller reference
// . When Config.Cluster.Pods implements it, Sync reads a namespaced
// owner's pods with ListByController instead of List, so a sync costs
// O(the owner's pods + the namespace's orphans), not O(the namespace's
// pods); the pods that reach the claim step, and so every adoption, release
// and ManageReplicas call, are the same either way.
type PodsByController interface {
	Pods
	// ListByController returns the pods of namespace whose controller
	// ownerRef has exactly kind, name and uid, and the pods of namespace
	// that have no controller ownerRef (the orphans), in any state and any
	// order. namespace is not empty. An index keyed by namespace/kind/name/uid
	// for a controlled pod and by namespace for an orphan (upstream's
	// PodControllerIndexKey) answers it with two lookups.
	ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error)
}

// PodClient creates, deletes and patches pods: one value for every pod
// write of a [Controller] (the adapters' PodControl types are PodClients).
// The Manager calls the [PodControl] half; the Controller's claim step calls
// PatchPod to adopt and release pods. Implementations must
// be safe for concurrent use.
type PodClient interface {
	PodControl
	// PatchPod applies a strategic-merge patch to pod and returns the
	// patched pod. A client-go implementation calls Pods(ns).Patch with
	// types.StrategicMergePatchType; a controller-runtime one calls
	// client.Patch with client.RawPatch. Errors should be the client's
	// API errors: NotFound (and, on release, Invalid) are recognized with
	// k8s.io/apimachinery/pkg/api/errors. The pod must not be modified.
	PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)
}

// Cluster is how a [Controller] reads and writes the cluster: the caches it
// lists from, the clients it writes with, and how far the caches have
// synced. The adapters fill it in one call (clientgo.NewConfig,
// ctrlruntime.NewConfig); a hand-made one needs Owners, Pods, PodClient,
// StatusWriter and CachesSynced, and NewController names the first one
// missing. Resource and
// CacheVersions are optional: without them the consistency gate
// has nothing to compare and never defers.
type Cluster[T Object] struct {
	// Owners reads the owners. An [OwnersByController] also finds the
	// related owners by controller UID.
	Owners Owners[T]
	// Pods lists pods. A [PodsByController] lets Sync read only the
	// owner's pods and the namespace's orphans.
	Pods Pods
	// PodClient creates and deletes pods (the manage step) and patches them
	// (adoption and release, R-9.5, R-12.2).
	PodClient PodClient
	// StatusWriter writes what Config.Status computed and returns the
	// server's answer: Sync calls it at most once per sync that reaches the
	// status step, returns its error first, and records the version
	// the server answered under Resource for the consistency gate.
	StatusWriter StatusWriter[T]
	// Resource is the owners' group and resource (apps, replicasets for
	// ReplicaSets; [ReplicaSets] sets it): the status writes Sync records
	// are recorded under it, and CacheVersions.Owners is the
	// version of its informer cache. The zero value records no status
	// writes. It is required when CacheVersions.Owners is set, and must not
	// be the core group's pods.
	Resource schema.GroupResource
	// CacheVersions tells the Controller how far its informers' caches
	// have synced. With them the consistency gate runs first in
	// every Sync: while a cache is older than the controller's own last
	// write of that resource for the owner, the sync is deferred. Pods
	// also feeds Config.Expectations.Exact. The zero value supplies no
	// versions: the gate never defers, which is upstream before 1.36 (and
	// with AtomicFIFO off, where the stores do not track a version).
	CacheVersions CacheVersions
	// CachesSynced is the unsynced-cache guard, required: it reports
	// whether every cache the Controller reads has loaded its first list
	// (client-go: each informer's HasSynced). While it answers false, Sync
	// reads nothing and returns an error for which errors.Is(err,
	// ErrDeferred) and errors.Is(err, ErrNotSynced) hold, whatever the
	// gate's setting: a sync on a pod cache that has not listed yet would
	// see no pod and create every pod again. The adapters set it
	// from their informers; a hand-built Cluster whose caches are complete
	// from the start (a test's maps) says so with a func that returns
	// true. It is called from Sync's goroutines and must be safe for
	// concurrent use and fast.
	CachesSynced func() bool
}

// CacheVersions returns how far the informer caches a [Controller] reads
// have synced: each func returns the resourceVersion of the latest list,
// event or bookmark its cache has applied (client-go: the informer store's
// LastStoreSyncResourceVersion). A nil func, or one that returns "",
// never holds a sync back: "" is what a store that does not track versions
// answers. The funcs are called from Sync, concurrently when several
// workers sync, with no lock of the Controller held; they must be safe for
// concurrent use and fast. The zero value supplies nothing.
type CacheVersions struct {
	// Pods is the version of the pod informer's cache: it is compared with
	// the controller's pod creates and adoption patches, for the gate and
	// for the EvidenceFirst policy.
	Pods func() string
	// Owners is the version of the owner informer's cache (Cluster.Resource):
	// it is compared with the controller's status writes.
	Owners func() string
}
