package controller_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

// TestQuickStart runs the PodSet controller (the README's controller-runtime
// quick start is controller.New) with real client-go informers over
// controller-runtime's fake client, the adapter's typed handlers, and a
// worker doing what controller-runtime's does. The clock is frozen, so the
// expectations can only be satisfied by observed pod events: without the
// pod handler the second round of creates never starts. Deleting the PodSet
// leaves nothing behind (Controller.Len).
func TestQuickStart(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.PodSet{}).Build()
	ctrl, err := controller.New(c, c, scheme, controller.Options{Clock: fakeclock.New(t0)})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]())
	watching := &sync.WaitGroup{}
	run(ctx, t, &wg, watching, c, &corev1.Pod{}, &corev1.PodList{}, ctrlruntime.PodHandler(ctrl), q)
	run(ctx, t, &wg, watching, c, &v1alpha1.PodSet{}, &v1alpha1.PodSetList{}, ctrlruntime.OwnerHandler(ctrl), q)
	watching.Wait() // the fake client's watch replays nothing: start it before the first write
	wg.Go(func() {
		r := ctrlruntime.Reconciler[*v1alpha1.PodSet]{Controller: ctrl}
		for {
			req, quit := q.Get()
			if quit {
				return
			}
			res, err := r.Reconcile(ctx, req)
			switch {
			case errors.Is(err, crreconcile.TerminalError(nil)):
				q.Forget(req)
			case err != nil:
				q.AddRateLimited(req)
			default:
				if res.RequeueAfter > 0 {
					q.AddAfter(req, res.RequeueAfter)
				}
				q.Forget(req)
			}
			q.Done(req)
		}
	})
	go func() { <-ctx.Done(); q.ShutDown() }()

	count := func() int {
		var list corev1.PodList
		require.NoError(t, c.List(t.Context(), &list, client.InNamespace(ns)))
		return len(list.Items)
	}
	ps := podSet(3)
	ps.UID = ""
	require.NoError(t, c.Create(t.Context(), ps))
	waitFor(t, func() bool { return count() == 3 }, "first round")
	require.NoError(t, c.Patch(t.Context(), ps, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":6}}`))))
	waitFor(t, func() bool { return count() == 6 }, "second round: the first one was observed")
	require.NoError(t, c.Delete(t.Context(), ps))
	waitFor(t, func() bool { return ctrl.Len() == 0 }, "nothing left for the deleted PodSet")
}

// run starts a client-go informer for obj over c's list and watch and feeds
// h, as controller-runtime's source.Kind does; watching is done once its
// watch is open.
func run[T client.Object](ctx context.Context, t *testing.T, wg *sync.WaitGroup, watching *sync.WaitGroup, c client.WithWatch,
	obj T, list client.ObjectList, h handler.TypedEventHandler[T, crreconcile.Request], q ctrlruntime.Queue) {
	watching.Add(1)
	var once sync.Once
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			return l, c.List(ctx, l)
		},
		WatchFuncWithContext: func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			w, err := c.Watch(ctx, list.DeepCopyObject().(client.ObjectList))
			once.Do(watching.Done)
			return w, err
		},
	}
	inf := toolscache.NewSharedIndexInformer(noWatchList{lw}, obj, 0, toolscache.Indexers{})
	_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { h.Create(ctx, event.TypedCreateEvent[T]{Object: o.(T)}, q) },
		UpdateFunc: func(old, cur any) {
			h.Update(ctx, event.TypedUpdateEvent[T]{ObjectOld: old.(T), ObjectNew: cur.(T)}, q)
		},
		DeleteFunc: func(o any) {
			if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = tomb.Obj
			}
			h.Delete(ctx, event.TypedDeleteEvent[T]{Object: o.(T)}, q)
		},
	})
	require.NoError(t, err)
	wg.Go(func() { inf.RunWithContext(ctx) })
}

// noWatchList tells the reflector to list then watch: the fake client
// cannot stream a list over a watch (WatchListClient).
type noWatchList struct{ *toolscache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// waitFor polls cond; the bound only guards against a hang.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for: %s", what)
}
