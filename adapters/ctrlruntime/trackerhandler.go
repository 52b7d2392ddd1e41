package ctrlruntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// TrackPods returns a pod event handler for a controller that keeps its own
// [perpod.Tracker] (one key per owner, or per pod group of an owner)
// rather than a reconcile.Controller, which [PodHandler] serves. It records
// each pod event in tracker under the keys keys maps the pod to, as
// upstream's ReplicaSet controller records them under its owner's key, and
// then passes the event, unchanged and with the same queue, to next (the
// handler that enqueues, e.g. handler.EnqueueRequestForOwner), so that the
// reconcile next starts sees the observation (the example wraps
// handler.EnqueueRequestForOwner, as a builder's Watches of pods would).
// It is generic so that it wraps an untyped handler (O client.Object, for
// the builder's Watches) as well as a typed one (O *corev1.Pod, for
// source.Kind); the event's object is a pod in either case, anything else
// records nothing. What is recorded, with the pod key "namespace/name":
//
//   - a create is a creation of the pod under each of its keys
//     (Tracker.CreationObserved), or, when the pod already carries a
//     deletion timestamp, a deletion;
//   - a delete, one whose final state was unknown (DeleteStateUnknown: the
//     pod may be stale; controller-runtime unwraps the tombstone) included,
//     is a deletion under each of its keys (Tracker.DeletionObserved);
//   - an update that carries a deletion timestamp is a deletion of the new
//     pod (a terminating pod counts as deleted, as upstream's), and of the
//     old one too when the labels changed; it counts once per expected pod
//     key however many updates carry it;
//   - any other update records nothing, a resync (equal resourceVersions)
//     included, as upstream's: a pod whose labels or controller reference
//     change, so that its keys change, was counted under its old keys when
//     it was created, and its deletion counts under the keys it has when it
//     goes. A deletion expected under the old keys of a pod that left them
//     stays pending until its expiry (perpod.Options.DeletionExpiry), or
//     until the caller forgets the key (Tracker.Delete). next receives
//     both objects; EnqueueRequestForOwner enqueues both owners;
//   - a generic event records nothing.
//
// A nil tracker or nil keys records nothing; a nil next handles nothing
// more. The handler never modifies the objects. It is safe for concurrent
// use when keys and next are (every [perpod.PodKeys] constructor is).
func TrackPods[O client.Object, R comparable](tracker *perpod.Tracker, keys perpod.PodKeys, next handler.TypedEventHandler[O, R]) handler.TypedEventHandler[O, R] {
	return trackPods[O, R]{observe: podops.Observer{Tracker: tracker, Keys: keys}, next: next}
}

// trackPods is the handler TrackPods returns.
type trackPods[O client.Object, R comparable] struct {
	observe podops.Observer
	next    handler.TypedEventHandler[O, R]
}

var (
	_ handler.EventHandler                                        = trackPods[client.Object, crreconcile.Request]{}
	_ handler.TypedEventHandler[*corev1.Pod, crreconcile.Request] = trackPods[*corev1.Pod, crreconcile.Request]{}
)

func (h trackPods[O, R]) Create(ctx context.Context, e event.TypedCreateEvent[O], q workqueue.TypedRateLimitingInterface[R]) {
	if pod, ok := asPod(e.Object); ok {
		h.observe.Added(pod)
	}
	if h.next != nil {
		h.next.Create(ctx, e, q)
	}
}

func (h trackPods[O, R]) Update(ctx context.Context, e event.TypedUpdateEvent[O], q workqueue.TypedRateLimitingInterface[R]) {
	old, ok1 := asPod(e.ObjectOld)
	cur, ok2 := asPod(e.ObjectNew)
	if ok1 && ok2 {
		h.observe.Updated(old, cur)
	}
	if h.next != nil {
		h.next.Update(ctx, e, q)
	}
}

func (h trackPods[O, R]) Delete(ctx context.Context, e event.TypedDeleteEvent[O], q workqueue.TypedRateLimitingInterface[R]) {
	if pod, ok := asPod(e.Object); ok {
		h.observe.Deleted(pod)
	}
	if h.next != nil {
		h.next.Delete(ctx, e, q)
	}
}

func (h trackPods[O, R]) Generic(ctx context.Context, e event.TypedGenericEvent[O], q workqueue.TypedRateLimitingInterface[R]) {
	if h.next != nil {
		h.next.Generic(ctx, e, q)
	}
}

// asPod returns obj as a non-nil pod.
func asPod[O client.Object](obj O) (*corev1.Pod, bool) {
	pod, ok := any(obj).(*corev1.Pod)
	return pod, ok && pod != nil
}
