package clientgo

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// TrackPods returns a pod informer handler for a controller that keeps its
// own [perpod.Tracker] (one key per owner, or per pod group of an owner)
// rather than a reconcile.Controller, which [PodHandler] serves. It
// records each pod event in tracker under the keys keys maps the pod to, as
// upstream's ReplicaSet controller does under its owner's key: an add is a
// creation, a delete (tombstones included) or an update carrying a deletion
// timestamp a deletion, any other update nothing. Then it passes the event,
// unchanged, to next (the caller's handler, which enqueues), so that a sync
// started by next sees the observation. Objects that are not pods record
// nothing and still reach next. A nil tracker or nil keys records nothing;
// a nil next handles nothing more. It never modifies the objects and is
// safe for concurrent use when keys and next are (every
// [perpod.PodKeys] constructor is). Each event's rule, and what
// happens to a pod whose keys change: docs/design/pod-keys.md.
func TrackPods(tracker *perpod.Tracker, keys perpod.PodKeys, next cache.ResourceEventHandler) cache.ResourceEventHandler {
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
