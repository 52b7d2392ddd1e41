package clientgo

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/expectations"
)

// TrackPods returns a pod informer handler for a controller that keeps its
// own [expectations.Tracker] (one key per owner, or per pod group of an
// owner) rather than a reconcile.Controller, which [PodHandler] serves. It
// records each pod event in tracker under the keys keys maps the pod to, as
// upstream's ReplicaSet controller records them under its owner's key, and
// then passes the event, unchanged, to next (the caller's own handler, which
// enqueues), so that a sync started by next sees the observation:
//
//   - an add is a creation of the pod under each of its keys
//     (Tracker.CreationObservedKey with the pod key "namespace/name"), or,
//     when the pod already carries a deletion timestamp, a deletion;
//   - a delete, a [cache.DeletedFinalStateUnknown] tombstone's possibly
//     stale pod included, is a deletion under each of its keys
//     (Tracker.DeletionObserved);
//   - an update that carries a deletion timestamp is a deletion of the new
//     pod (a terminating pod counts as deleted, as upstream's), and of the
//     old one too when the labels changed; it counts once per expected pod
//     key however many updates carry it;
//   - any other update records nothing, a resync (equal resourceVersions)
//     included, as upstream's: a pod whose labels or controller reference
//     change, so that its keys change, was counted under its old keys when
//     it was added, and its deletion counts under the keys it has when it
//     goes. A deletion expected under the old keys of a pod that left them
//     stays pending until the expectations' TTL, or until the caller forgets
//     the key (Tracker.Delete). next receives both objects and can enqueue
//     both owners.
//
// Objects that are not pods record nothing and still reach next. A nil
// tracker or nil keys records nothing; a nil next handles nothing more. The
// handler never modifies the objects. It is safe for concurrent use when
// keys and next are (every [expectations.PodKeys] constructor is).
func TrackPods(tracker *expectations.Tracker, keys expectations.PodKeys, next cache.ResourceEventHandler) cache.ResourceEventHandler {
	return trackPods{observe: podops.Observer{Tracker: tracker, Keys: keys}, next: next}
}

// trackPods is the handler TrackPods returns.
type trackPods struct {
	observe podops.Observer
	next    cache.ResourceEventHandler
}

func (h trackPods) OnAdd(obj any, isInInitialList bool) {
	if pod, ok := obj.(*corev1.Pod); ok {
		h.observe.Added(pod)
	}
	if h.next != nil {
		h.next.OnAdd(obj, isInInitialList)
	}
}

func (h trackPods) OnUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(*corev1.Pod)
	cur, ok2 := newObj.(*corev1.Pod)
	if ok1 && ok2 {
		h.observe.Updated(old, cur)
	}
	if h.next != nil {
		h.next.OnUpdate(oldObj, newObj)
	}
}

func (h trackPods) OnDelete(obj any) {
	if pod, ok := Unwrap[*corev1.Pod](obj); ok {
		h.observe.Deleted(pod)
	}
	if h.next != nil {
		h.next.OnDelete(obj)
	}
}
