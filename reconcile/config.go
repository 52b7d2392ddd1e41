package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/slowstart"
	"github.com/reconcilekit/reconcilekit/status"
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
// ReplicaSets: when Config.Owners implements it, the default related lookup
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
// . When Config.Pods implements it, Sync reads a namespaced
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

// PodPatcher applies a strategic-merge patch to a pod and returns the
// patched pod: the [Controller] adopts and releases pods with it (R-9.5,
// A client-go implementation calls Pods(ns).Patch with
// types.StrategicMergePatchType; a controller-runtime one calls
// client.Patch with client.RawPatch. Errors should be the client's API
// errors: NotFound (and, on release, Invalid) are recognized with
// k8s.io/apimachinery/pkg/api/errors. The pod must not be modified.
type PodPatcher interface {
	PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)
}

// PodPatcherFunc adapts a function to a [PodPatcher].
type PodPatcherFunc func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)

// PatchPod calls f.
func (f PodPatcherFunc) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	return f(ctx, pod, data)
}

// Config configures a [Controller] for owners of type T. Kind, Describe,
// Owners, Pods, Control, Patcher, Status and StatusWriter are required:
// NewController names the first one missing. The tuning fields' zero values
// are upstream's behaviour; a combination of opt-ins that cannot work
// together is rejected by NewController, named. [ReplicaSets] returns a
// Config with Kind, Resource, Describe and Status filled in for apps/v1
// ReplicaSets.
//
// The consistency gate of upstream v1.37 is on by default, and
// runs as soon as CacheVersions supply the informers' versions: a sync is
// deferred while a cache is older than the controller's own last write for
// the owner. Without CacheVersions it cannot know and never defers;
// DisableConsistencyGate turns it off.
type Config[T Object] struct {
	// Kind is the owners' group, version and kind: written into the
	// controller ownerRef of created and adopted pods, and compared (the
	// kind only, as upstream, R-12.7) with the controller ownerRef of pods
	// in events. There is no default.
	Kind schema.GroupVersionKind
	// Describe returns the owner facts the Controller acts on: replicas,
	// template, selector, minReadySeconds ([Owner]). Owner.Object and
	// Owner.Kind may be left zero (the Controller fills in the object and
	// Kind); Owner.Key must be empty or OwnerKey(namespace, name). An
	// error makes Sync fail with [ErrTerminal]. It must not modify the
	// owner and must be safe for concurrent use.
	Describe func(owner T) (Owner, error)
	// Owners reads the owners. An [OwnersByController] also finds the
	// related owners by controller UID.
	Owners Owners[T]
	// Pods lists pods. A [PodsByController] lets Sync read only the
	// owner's pods and the namespace's orphans.
	Pods Pods
	// Control creates and deletes pods.
	Control PodControl
	// Patcher adopts and releases pods.
	Patcher PodPatcher
	// Status computes the owner's status from what the sync saw and did
	// (a pure function, [StatusFunc]): a copy of the owner carrying the new
	// status, or false when it is already right. [ReplicaSets] sets
	// upstream's ([ReplicaSetStatus]).
	Status StatusFunc[T]
	// StatusWriter writes what Status computed and returns the server's
	// answer: Sync calls it at most once per sync that reaches the status
	// step, returns its error first, and records the version the
	// server answered under Resource for the consistency gate.
	// The adapters supply it (client-go's UpdateStatus with upstream's one
	// retry, controller-runtime's Status().Update).
	StatusWriter StatusWriter[T]
	// Related returns the pods whose nodes count towards the deletion rank
	// of owner's pods. It is called only when pods must be deleted;
	// an error is reported in SyncResult.RelatedErr and the deletion uses
	// zero ranks, as upstream. Nil means upstream's rule: the pods, matched
	// by selector, of every owner of the namespace whose controller
	// ownerRef has the same UID as owner's (OwnersByController.ListByController
	// when Owners offers it, else Owners.List filtered), de-duplicated by
	// UID; none for an owner without a controller.
	Related func(ctx context.Context, owner T) ([]*corev1.Pod, error)

	// Clock is the time source of the Controller, its expectations (unless
	// Expectations.Clock is set) and the deletion ranking. Nil: real time.
	Clock Clock
	// BurstReplicas caps the creates, and separately the deletes, of one
	// sync. <= 0 means DefaultBurstReplicas (500).
	BurstReplicas int
	// Ranking configures the choice of pods to delete. Its Now must stay
	// zero (NewController rejects it): the ranking's time is Clock's.
	Ranking podrank.Options
	// SlowStart configures the create batches.
	SlowStart slowstart.Options
	// Expectations configures the Controller's expectations Tracker (TTL,
	// hooks). A nil Clock means Config.Clock. Leave its Policy at the zero
	// value or NeverExpire (EvidenceFirst comes with Exact, which
	// NewController requires for it), and its Gate nil: the Tracker reads
	// its evidence from the Controller's own Gate.
	Expectations expectations.Options
	// Gate configures the Controller's consistency gate. Its
	// Deferred hook reports every sync the gate defers (upstream's skip
	// counter), with the resource whose cache is behind. Leave its Caches
	// nil: NewController fills them in from CacheVersions and rejects a
	// Config that sets both (Gate.Caches alone is accepted, keyed by
	// expectations.PodsResource and Resource).
	Gate expectations.GateOptions

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
	// also feeds the EvidenceFirst policy (through the Gate).
	// The zero value supplies no versions: the gate never defers, which is
	// upstream before 1.36 (and with AtomicFIFO off, where the stores do
	// not track a version).
	CacheVersions CacheVersions
	// DisableConsistencyGate turns the gate off, as upstream's feature
	// gate StaleControllerConsistencyReplicaSet=false does: Sync never
	// defers. The controller's writes are still recorded, for
	// EvidenceFirst. False (the zero value) is upstream v1.37's default:
	// the gate runs whenever CacheVersions supply versions.
	DisableConsistencyGate bool
	// Exact turns on reconcilekit's exact expectations (beyond upstream,
	// off by default), as one switch: creations tracked by pod key
	// (TrackCreations) and the EvidenceFirst expiry policy
	// (expectations.EvidenceFirst), which decides a round from the pod
	// cache's version (CacheVersions.Pods, required with Exact) instead of
	// waiting out the TTL. The two only work together: evidence resolves
	// a round while its add events may still be on their way, and only
	// tracked creations keep those late events off the next round.
	Exact bool
	// TrackCreations names new pods in the Controller and expects them by
	// pod key (see [Manager].TrackCreations), without the evidence of
	// Exact. Beyond upstream, off by default. Turn it on when the API in
	// front of the PodControl ignores GenerateName, as client-go's fake
	// clientset does.
	TrackCreations bool
	// NameGenerator names new pods under TrackCreations (see
	// [Manager].NameGenerator). Nil: the API server's scheme.
	NameGenerator func(prefix string) string
	// StatusInterval, beyond upstream, coalesces the status writes of an
	// owner that is still converging: while its pods are not all there,
	// ready and available (Counts against Owner.Replicas, no terminating
	// pod), a status change is written at most once per StatusInterval;
	// the sync that skips a write asks to be requeued when the interval
	// ends (SyncResult.StatusCoalesced, RequeueAfter), so the latest status
	// is always written. Never delayed: the first write for an owner (or
	// after a restart), the first after a spec change (a new generation, so
	// observedGeneration advances at once), a write that carries a manage
	// error (the ReplicaFailure condition), and the converged status. Zero
	// or negative: every change is written at once, as upstream
	// (docs/rules.md, R-13.3).
	StatusInterval time.Duration
	// Hooks receives metrics-style notifications of the manage step.
	Hooks Hooks
	// Fence, when set, answers "may this replica still write?" (e.g. does
	// it still hold its leader lease): Sync calls it immediately before
	// each write — every adoption and release patch, every pod create and
	// delete (see [Manager].Fence), and the status write when Status asks
	// for one (a skipped write asks nothing) — and a non-nil
	// error refuses that write. The refused write is not made, and the sync
	// makes no further write: a refusal in the claim step ends the sync
	// there, one in the manage step skips the status write, and the
	// creations and deletions not made are lowered in the expectations as
	// failed ones. Sync then returns an error for which errors.Is(err,
	// ErrFenced) and errors.Is(err, reason) hold (not [ErrTerminal]).
	// Reads (the caches, Owners.GetLive) are never fenced. It is called
	// from Sync's goroutines, concurrently when several workers sync, and
	// once per write, so it must be safe for concurrent use and fast. The
	// adapters' fencing package fills it from client-go's leader election.
	// Nil never refuses: upstream's behaviour.
	//
	// Beyond upstream, which has no such check (docs/rules.md, R-13.1).
	Fence func() error
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
	// Owners is the version of the owner informer's cache (Config.Resource):
	// it is compared with the controller's status writes.
	Owners func() string
	// Synced reports whether every cache the Controller reads has loaded
	// its first list (client-go: each informer's HasSynced). While it
	// answers false, Sync reads nothing and returns an error for which
	// errors.Is(err, ErrDeferred) and errors.Is(err, ErrNotSynced) hold,
	// whatever the gate's setting: a sync on a pod cache that has not
	// listed yet would create every pod again. Nil: the caches
	// are taken as synced, as a controller that waits for them before its
	// first sync (upstream's Run) may assume. The adapters' CacheVersions
	// set it.
	Synced func() bool
}

// replicaSetsResource is the group/resource of apps/v1 ReplicaSets.
var replicaSetsResource = schema.GroupResource{Group: "apps", Resource: "replicasets"}

// ReplicaSets returns a Config for apps/v1 ReplicaSets with Kind, Resource,
// Describe ([ReplicaSetOwner]) and Status (upstream's, [ReplicaSetStatus])
// filled in; the caller sets the rest.
func ReplicaSets() Config[*appsv1.ReplicaSet] {
	return Config[*appsv1.ReplicaSet]{
		Kind:     replicaSetKind,
		Resource: replicaSetsResource,
		Status:   ReplicaSetStatus(status.Options{}),
		Describe: func(rs *appsv1.ReplicaSet) (Owner, error) {
			if rs == nil {
				return Owner{}, errors.New("reconcile: nil ReplicaSet")
			}
			return ReplicaSetOwner(rs), nil
		},
	}
}

// validate names the first required field that is missing.
func (c *Config[T]) validate() error {
	var missing, hint string
	switch {
	case c.Kind.Kind == "" || c.Kind.Version == "":
		missing, hint = "Kind", " (the owners' group, version and kind; there is no default: use ReplicaSets() for apps/v1 ReplicaSets)"
	case c.Describe == nil:
		missing = "Describe"
	case isNilValue(c.Owners):
		missing = "Owners"
	case isNilValue(c.Pods):
		missing = "Pods"
	case isNilValue(c.Control):
		missing = "Control"
	case isNilValue(c.Patcher):
		missing = "Patcher"
	case c.Status == nil:
		missing = "Status"
	case isNilValue(c.StatusWriter):
		missing = "StatusWriter"
	default:
		if err := c.validateCaches(); err != nil {
			return err
		}
		return c.validateOptIns()
	}
	return fmt.Errorf("reconcile: NewController: Config.%s is required%s", missing, hint)
}

// validateCaches checks that the cache versions can be told apart and are
// said once.
func (c *Config[T]) validateCaches() error {
	cv := c.CacheVersions
	switch {
	case (cv.Pods != nil || cv.Owners != nil) && c.Gate.Caches != nil:
		return errors.New("reconcile: NewController: both Config.CacheVersions and Config.Gate.Caches are set; set CacheVersions only")
	case c.Expectations.Gate != nil:
		return errors.New("reconcile: NewController: Config.Expectations.Gate is set; the Controller builds its own Gate " +
			"(from Config.Gate and CacheVersions) and reads it through Controller.Gate")
	case cv.Owners != nil && c.Resource.Resource == "":
		return errors.New("reconcile: NewController: Config.CacheVersions.Owners is set without Config.Resource (the owners' group and resource, e.g. apps/replicasets)")
	case cv.Owners != nil && c.Resource == expectations.PodsResource:
		return errors.New("reconcile: NewController: Config.Resource is pods; the owners' writes must be told apart from the pods'")
	}
	return nil
}

// validateOptIns rejects the combinations of opt-ins that cannot work, and
// options the Controller would overwrite, naming them.
func (c *Config[T]) validateOptIns() error {
	policy := c.Expectations.Policy
	switch {
	case !c.Ranking.Now.IsZero():
		return errors.New("reconcile: NewController: Config.Ranking.Now is set; the deletion ranking reads the time from Config.Clock: set Clock instead")
	case c.Exact && c.CacheVersions.Pods == nil:
		return errors.New("reconcile: NewController: Config.Exact without Config.CacheVersions.Pods: the evidence is the pod cache's version " +
			"(the adapters' Config builders set it; clientgo.CacheVersions or ctrlruntime.CacheVersions otherwise)")
	case c.Exact && policy != expectations.ExpireAfterTTL && policy != expectations.EvidenceFirst:
		return fmt.Errorf("reconcile: NewController: Config.Exact with Config.Expectations.Policy %v: Exact uses EvidenceFirst; leave Policy zero", policy)
	case !c.Exact && policy == expectations.EvidenceFirst:
		return errors.New("reconcile: NewController: Config.Expectations.Policy EvidenceFirst without Config.Exact: " +
			"evidence needs tracked creations and the pod cache's version; set Config.Exact (with CacheVersions.Pods) instead")
	}
	return nil
}

// caches returns the Gate's Caches for c: Config.Gate.Caches as given, or a
// new map built from CacheVersions (nil when it supplies nothing).
func (c *Config[T]) caches() map[schema.GroupResource]func() string {
	cv := c.CacheVersions
	if cv.Pods == nil && cv.Owners == nil {
		return c.Gate.Caches
	}
	m := make(map[schema.GroupResource]func() string, 2)
	if cv.Pods != nil {
		m[expectations.PodsResource] = cv.Pods
	}
	if cv.Owners != nil {
		m[c.Resource] = cv.Owners
	}
	return m
}
