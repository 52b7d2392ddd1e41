package reconcile

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Request asks the caller to enqueue the owner Key, after After (0: now).
// It is what an informer event handler passes to its workqueue: Add(Key)
// when After is 0, AddAfter(Key, After) otherwise.
type Request struct {
	Key   string        // the owner's key, "namespace/name"
	After time.Duration // how long to wait before adding Key; 0 means at once
}

// Owned is what [Observer.Resolve] returns for an owner that exists.
type Owned struct {
	// Key is the owner's expectations and workqueue key (see [OwnerKey]).
	Key string
	// MinReadySeconds is the owner's minReadySeconds; > 0 makes a pod
	// turning ready schedule an extra delayed request.
	MinReadySeconds int32
}

// Observer turns pod informer events into expectation observations and
// workqueue requests, as upstream's ReplicaSet event handlers do (SPEC §11).
// It imports no client library: the caller resolves owners and matches
// selectors through two functions, and enqueues the returned requests.
//
// Wire it into a client-go informer as
//
//	AddFunc:    func(obj any) { enqueue(o.PodAdded(obj.(*corev1.Pod))) },
//	UpdateFunc: func(old, cur any) { enqueue(o.PodUpdated(old.(*corev1.Pod), cur.(*corev1.Pod))) },
//	DeleteFunc: func(obj any) { /* unwrap cache.DeletedFinalStateUnknown */ enqueue(o.PodDeleted(pod)) },
//
// and call [Observer.OwnerDeleted] from the owner informer's delete handler.
// The caller unwraps client-go tombstones (DeletedFinalStateUnknown) and
// passes the possibly stale pod inside; anything that is not a pod is the
// caller's to drop.
//
// The zero Observer records nothing and resolves nothing. An Observer is
// safe for concurrent use if Resolve and Match are; it keeps no state of its
// own. Events never modify the pods passed in.
type Observer struct {
	// Expectations is the Tracker the [Manager] uses (see
	// [Manager.Tracker]). Nil: events only produce requests.
	Expectations *expectations.Tracker
	// Kind is the owner kind a pod's controller ownerRef must name to be
	// resolved; "" means "ReplicaSet". Only the kind is compared, as
	// upstream does, not the API version.
	Kind string
	// Resolve looks up the owner a controller ownerRef of a pod in
	// namespace names (ref.Kind already checked against Kind). It must
	// report false unless an owner with ref.Name exists in namespace and
	// its UID equals ref.UID — a pod of a deleted owner must not touch the
	// expectations of a new owner with the same name. Nil: nothing
	// resolves.
	Resolve func(namespace string, ref metav1.OwnerReference) (Owned, bool)
	// Match returns the keys of the owners whose selector matches an
	// orphan pod (one without a controller ownerRef), so they can adopt it.
	// It is called only for pods with labels; as upstream, an owner with
	// an empty or nil selector must not match. Nil: orphans are ignored.
	Match func(pod *corev1.Pod) []string
}

// PodAdded handles a pod add event. A pod that already carries a
// deletion timestamp is handled exactly as [Observer.PodDeleted]. A pod
// whose controller resolves counts as that owner's creation (by pod key
// for tracked creations, by count otherwise) and enqueues the owner. An
// orphan never lowers expectations; it enqueues the owners Match returns.
// A nil pod yields nothing.
func (o *Observer) PodAdded(pod *corev1.Pod) []Request {
	if pod == nil {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		// A pod can be created and marked for deletion before the informer
		// sees it; it must not count as a creation.
		return o.PodDeleted(pod)
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		owned, ok := o.resolve(pod.Namespace, ref)
		if !ok {
			return nil
		}
		if o.Expectations != nil {
			o.Expectations.CreationObservedKey(owned.Key, PodKey(pod))
		}
		return []Request{{Key: owned.Key}}
	}
	return o.orphan(pod)
}

// PodUpdated handles a pod update event from old to cur:
//   - equal resourceVersions (a resync) do nothing;
//   - a deletion timestamp on cur is handled as [Observer.PodDeleted] of cur,
//     and of old too when the labels changed;
//   - a changed controller ownerRef enqueues the old owner if it resolves;
//   - a controlled pod enqueues its owner, plus a request after the owner's
//     MinReadySeconds when the pod just turned ready;
//   - an orphan whose labels or controller ref changed enqueues its matches.
//
// Apart from the deletion case, updates never touch expectations. A nil cur
// yields nothing; a nil old is handled as [Observer.PodAdded] of cur.
func (o *Observer) PodUpdated(old, cur *corev1.Pod) []Request {
	if cur == nil {
		return nil
	}
	if old == nil {
		return o.PodAdded(cur)
	}
	if old.ResourceVersion == cur.ResourceVersion {
		return nil
	}
	labelsChanged := !sameLabels(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		// The deletion counts once per key however many updates carry it
		// (the Tracker's key set, R-3.2).
		reqs := o.PodDeleted(cur)
		if labelsChanged {
			reqs = append(reqs, o.PodDeleted(old)...)
		}
		return reqs
	}
	var reqs []Request
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !sameRef(oldRef, curRef)
	if refChanged && oldRef != nil {
		if owned, ok := o.resolve(old.Namespace, oldRef); ok {
			reqs = append(reqs, Request{Key: owned.Key})
		}
	}
	if curRef != nil {
		owned, ok := o.resolve(cur.Namespace, curRef)
		if !ok {
			return reqs
		}
		reqs = append(reqs, Request{Key: owned.Key})
		if owned.MinReadySeconds > 0 && !podutil.IsReady(old) && podutil.IsReady(cur) {
			// Availability comes MinReadySeconds after readiness, and no
			// event will announce it.
			reqs = append(reqs, Request{Key: owned.Key, After: time.Duration(owned.MinReadySeconds) * time.Second})
		}
		return reqs
	}
	if labelsChanged || refChanged {
		reqs = append(reqs, o.orphan(cur)...)
	}
	return reqs
}

// PodDeleted handles a pod delete event, including the possibly
// stale pod of a tombstone, which the caller unwraps. A pod whose controller
// resolves counts as that owner's deletion of its pod key (once per
// expected key) and enqueues the owner; other pods yield nothing.
func (o *Observer) PodDeleted(pod *corev1.Pod) []Request {
	if pod == nil {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return nil
	}
	owned, ok := o.resolve(pod.Namespace, ref)
	if !ok {
		return nil
	}
	if o.Expectations != nil {
		o.Expectations.DeletionObserved(owned.Key, PodKey(pod))
	}
	return []Request{{Key: owned.Key}}
}

// OwnerDeleted handles the deletion of the owner with key: it
// drops the owner's expectations, counters and key sets, and returns the
// request to enqueue it (its sync then finds it gone). Call it too when an
// owner update shows a new UID under the same name: the old
// incarnation's expectations must not hold back the new one.
func (o *Observer) OwnerDeleted(key string) []Request {
	if o.Expectations != nil {
		o.Expectations.Delete(key)
	}
	return []Request{{Key: key}}
}

func (o *Observer) resolve(namespace string, ref *metav1.OwnerReference) (Owned, bool) {
	kind := o.Kind
	if kind == "" {
		kind = "ReplicaSet"
	}
	if ref.Kind != kind || o.Resolve == nil {
		return Owned{}, false
	}
	owned, ok := o.Resolve(namespace, *ref)
	if !ok || owned.Key == "" {
		return Owned{}, false
	}
	return owned, true
}

// orphan enqueues every owner whose selector matches pod. A pod
// without labels matches nothing.
func (o *Observer) orphan(pod *corev1.Pod) []Request {
	if o.Match == nil || len(pod.Labels) == 0 {
		return nil
	}
	keys := o.Match(pod)
	if len(keys) == 0 {
		return nil
	}
	reqs := make([]Request, 0, len(keys))
	for _, k := range keys {
		if k != "" {
			reqs = append(reqs, Request{Key: k})
		}
	}
	return reqs
}

// sameLabels is deep equality: a nil and an empty map differ.
func sameLabels(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}

// sameRef compares two controller refs by value (both nil is equal).
func sameRef(a, b *metav1.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		equalBoolPtr(a.Controller, b.Controller) && equalBoolPtr(a.BlockOwnerDeletion, b.BlockOwnerDeletion)
}

func equalBoolPtr(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
