package ctrlruntime

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Queue is controller-runtime's workqueue of reconcile requests.
type Queue = workqueue.TypedRateLimitingInterface[crreconcile.Request]

// Enqueue adds each request's owner to q: at once, or after Request.After.
func Enqueue(q Queue, reqs []reconcile.Request) {
	for _, r := range reqs {
		ns, name, ok := strings.Cut(r.Key, "/")
		if !ok {
			ns, name = "", r.Key
		}
		item := crreconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
		if r.After > 0 {
			q.AddAfter(item, r.After)
		} else {
			q.Add(item)
		}
	}
}

// PodHandler returns the pod event handler: creates, updates and deletes
// go to c (controller-runtime unwraps tombstones itself), and the owners c
// names are enqueued.
func PodHandler[T reconcile.Object](c *reconcile.Controller[T]) handler.TypedEventHandler[*corev1.Pod, crreconcile.Request] {
	return handler.TypedFuncs[*corev1.Pod, crreconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*corev1.Pod], q Queue) {
			Enqueue(q, c.PodAdded(e.Object))
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*corev1.Pod], q Queue) {
			Enqueue(q, c.PodUpdated(e.ObjectOld, e.ObjectNew))
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*corev1.Pod], q Queue) {
			Enqueue(q, c.PodDeleted(e.Object))
		},
	}
}

// OwnerHandler returns the owner event handler: creates, updates and
// deletes go to c, which forgets everything about a deleted owner, and the
// owners c names are enqueued.
func OwnerHandler[T reconcile.Object](c *reconcile.Controller[T]) handler.TypedEventHandler[T, crreconcile.Request] {
	return handler.TypedFuncs[T, crreconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[T], q Queue) {
			Enqueue(q, c.OwnerAdded(e.Object))
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[T], q Queue) {
			Enqueue(q, c.OwnerUpdated(e.ObjectOld, e.ObjectNew))
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[T], q Queue) {
			Enqueue(q, c.OwnerDeleted(e.Object))
		},
	}
}

// Reconciler runs [reconcile.Controller.Sync] for each request: a
// [reconcile.ErrTerminal] error becomes a [crreconcile.TerminalError] (not
// retried), SyncResult.RequeueAfter becomes Result.RequeueAfter. Controller
// is required.
type Reconciler[T reconcile.Object] struct {
	Controller *reconcile.Controller[T]
}

// Reconcile implements reconcile.Reconciler.
func (r Reconciler[T]) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	res, err := r.Controller.Sync(ctx, reconcile.OwnerKey(req.Namespace, req.Name))
	if errors.Is(err, reconcile.ErrTerminal) {
		return crreconcile.Result{}, crreconcile.TerminalError(err)
	}
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, err
}

// Register builds a controller named name in mgr that watches owners of
// type T and pods through [OwnerHandler] and [PodHandler] and reconciles
// with [Reconciler]. Both watches are needed: without the pod watch the
// expectations are lowered only by their five-minute expiry.
func Register[T reconcile.Object](mgr ctrl.Manager, name string, c *reconcile.Controller[T]) error {
	if mgr == nil || c == nil {
		return errors.New("ctrlruntime: Register needs a manager and a Controller")
	}
	owner, err := newOf[T]()
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(name).
		WatchesRawSource(source.Kind(mgr.GetCache(), owner, OwnerHandler(c))).
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.Pod{}, PodHandler(c))).
		Complete(Reconciler[T]{Controller: c})
}
