package clientgo

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Queue is where the handlers put owner keys: a client-go workqueue, e.g.
// workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()).
type Queue = workqueue.TypedDelayingInterface[string]

// Enqueue adds each request's key to q: at once, or after Request.After.
func Enqueue(q Queue, reqs []reconcile.SyncRequest) {
	for _, r := range reqs {
		if r.After > 0 {
			q.AddAfter(r.Key, r.After)
		} else {
			q.Add(r.Key)
		}
	}
}

// Unwrap returns the object of an informer delete notification: obj itself,
// or the last known state inside a [cache.DeletedFinalStateUnknown]
// tombstone (the informer missed the deletion and learned it from a relist;
// the state may be stale). ok is false when neither is a T.
func Unwrap[T any](obj any) (t T, ok bool) {
	if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		obj = tomb.Obj
	}
	t, ok = obj.(T)
	return t, ok
}

// PodHandler returns the pod informer handler: every add, update and
// delete (tombstones unwrapped) goes to c, and the owners c names are
// enqueued. Objects that are not pods are ignored.
func PodHandler[T reconcile.Object](c *reconcile.Controller[T], q Queue) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				Enqueue(q, c.PodAdded(pod))
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Pod)
			p, ok2 := cur.(*corev1.Pod)
			if ok1 && ok2 {
				Enqueue(q, c.PodUpdated(o, p))
			}
		},
		DeleteFunc: func(obj any) {
			if pod, ok := Unwrap[*corev1.Pod](obj); ok {
				Enqueue(q, c.PodDeleted(pod))
			}
		},
	}
}

// OwnerHandler returns the owner informer handler: adds, updates and
// deletes (tombstones unwrapped) go to c, which forgets a deleted owner's
// state, and the owners c names are enqueued. Objects that are not T are
// ignored.
func OwnerHandler[T reconcile.Object](c *reconcile.Controller[T], q Queue) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(T); ok {
				Enqueue(q, c.OwnerAdded(o))
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(T)
			n, ok2 := cur.(T)
			if ok1 && ok2 {
				Enqueue(q, c.OwnerUpdated(o, n))
			}
		},
		DeleteFunc: func(obj any) {
			if o, ok := Unwrap[T](obj); ok {
				Enqueue(q, c.OwnerDeleted(o))
			}
		},
	}
}

// Register adds [PodHandler] to pods and [OwnerHandler] to owners. Both
// are needed: without the pod handler the expectations are only lowered by
// their expiry (five minutes), without the owner handler a deleted owner's
// state is kept until its key is synced again. When pods and owners are
// cache.SharedIndexInformers (an informer factory's are), it also adds
// [PodControllerIndex] and [ControllerUIDIndex], keeping indexes already
// registered under those names, so that [Pods] and [Owners] over their
// indexers read only what a sync needs. Call it before starting the
// informers.
func Register[T reconcile.Object](c *reconcile.Controller[T], pods, owners cache.SharedInformer, q Queue) error {
	if c == nil || pods == nil || owners == nil || q == nil {
		return errors.New("clientgo: Register needs a Controller, two informers and a queue")
	}
	if ix, ok := pods.(cache.SharedIndexInformer); ok {
		if err := AddPodControllerIndexer(ix); err != nil {
			return err
		}
	}
	if ix, ok := owners.(cache.SharedIndexInformer); ok {
		if err := AddControllerUIDIndexer(ix); err != nil {
			return err
		}
	}
	if _, err := pods.AddEventHandler(PodHandler(c, q)); err != nil {
		return err
	}
	_, err := owners.AddEventHandler(OwnerHandler(c, q))
	return err
}
