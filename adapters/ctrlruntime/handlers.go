package ctrlruntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/adapters/internal/fenceretry"
	"github.com/reconcilekit/reconcilekit/adapters/internal/synclog"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Queue is controller-runtime's workqueue of reconcile requests.
type Queue = workqueue.TypedRateLimitingInterface[crreconcile.Request]

// Enqueue adds each request's owner to q: at once, or after Request.After.
func Enqueue(q Queue, reqs []reconcile.SyncRequest) {
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
// [reconcile.ErrTerminal] error (an invalid owner or owner spec, a
// cluster-scoped owner, a malformed key) becomes a
// [crreconcile.TerminalError] (not retried; the owner's next event syncs
// it again), SyncResult.RequeueAfter becomes Result.RequeueAfter, and
// any other error is returned (controller-runtime retries it with rate
// limiting). Controller is required.
//
// A sync the fence refused (reconcile.ErrFenced: this replica may not
// write for now, e.g. a Lease renewal ran late) is Result.RequeueAfter one
// second, without an error: retried with controller-runtime's backoff, the
// owners that synced while the fence was closed would wait minutes after
// it opened again (beyond upstream, which has no fence). OnSync and
// Metrics still see the error.
//
// A deferred sync (reconcile.ErrDeferred: the caches have not synced,
// or the consistency gate waits for them to reach the controller's
// own writes, R-10.9) is retried with backoff, as upstream retries it
// (its workqueue's AddRateLimited). With Backoff set, the retry is
// Result.RequeueAfter = Backoff.When(request), without an error: no
// "Reconciler error" line and no controller_runtime_reconcile_errors_total
// for an expected wait; any other outcome calls Backoff.Forget(request).
// With Backoff nil, the deferral is returned as its error, and
// controller-runtime's queue applies its own rate limiter. [Register] sets
// Backoff to its own workqueue.DefaultTypedControllerRateLimiter, which
// grows the delays as the queue's default limiter does (a limiter apart
// from the queue's: controller-runtime resets the queue's on every
// RequeueAfter).
//
// Every sync is logged through the logger of the request's context
// (log.FromContext: controller-runtime's, with the controller's name and
// the reconcile ID): one line at V(4) with the owner, what the sync did
// and its result; at V(2) a deferral (with the cache that is behind); at
// the default level a sync that acted on expired expectations. Failed
// syncs, terminal ones included, are logged by controller-runtime
// ("Reconciler error"), once per reconcile, not again here. No line per
// pod. The zero value is not usable (no Controller); a Reconciler is safe
// for concurrent use when its Backoff and hooks are.
type Reconciler[T reconcile.Object] struct {
	Controller *reconcile.Controller[T]
	// Backoff, if set, times the retries of deferred syncs (above).
	Backoff workqueue.TypedRateLimiter[crreconcile.Request]
	// OnSync, if set, receives every sync's key, result and error (before
	// the error is turned into a Result), on the worker's goroutine: for
	// logs and metrics. It must not modify the result.
	OnSync func(ctx context.Context, key string, res reconcile.SyncResult, err error)
	// Metrics, if set, receives every sync's result and duration
	// (telemetry.Collector.ObserveSync).
	Metrics *telemetry.Collector
	// Clock times the syncs for Metrics and the log; nil: real time.
	Clock reconcile.Clock
}

// Reconcile implements controller-runtime's reconcile.Reconciler.
func (r Reconciler[T]) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	key := reconcile.OwnerKey(req.Namespace, req.Name)
	start := r.now()
	res, err := r.Controller.Sync(ctx, key)
	took := r.now().Sub(start)
	r.Metrics.ObserveSync(res, err, took)
	synclog.Sync(log.FromContext(ctx), key, res, err, took, false)
	if r.OnSync != nil {
		r.OnSync(ctx, key, res, err)
	}
	if fenceretry.Is(err) {
		// Not the owner's failure: no backoff, no "Reconciler error".
		if r.Backoff != nil {
			r.Backoff.Forget(req)
		}
		return crreconcile.Result{RequeueAfter: fenceretry.After}, nil
	}
	deferred := telemetry.Result(err) == telemetry.ResultDeferred
	if r.Backoff != nil {
		if deferred {
			return crreconcile.Result{RequeueAfter: r.Backoff.When(req)}, nil
		}
		r.Backoff.Forget(req)
	}
	if errors.Is(err, reconcile.ErrTerminal) {
		return crreconcile.Result{}, crreconcile.TerminalError(err)
	}
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, err
}

func (r Reconciler[T]) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// DefaultWorkers is the number of concurrent syncs [Register] runs by
// default: kube-controller-manager's --concurrent-replicaset-syncs default.
// controller-runtime's own default is 1.
const DefaultWorkers = 5

// Options configure [Register]. The zero value runs [DefaultWorkers]
// workers with controller-runtime's other defaults and no hook.
type Options struct {
	// Workers is the number of concurrent syncs (controller-runtime's
	// MaxConcurrentReconciles). <= 0: Controller.MaxConcurrentReconciles
	// when that is set, else DefaultWorkers.
	Workers int
	// Controller is passed to controller-runtime's builder (WithOptions):
	// rate limiter, queue, panic recovery, leader election, cache sync
	// timeout, name validation. Its Reconciler must be nil (Register sets
	// it); MaxConcurrentReconciles is overridden by Workers.
	Controller controller.Options
	// OnSync, if set, receives every sync's result and error
	// ([Reconciler].OnSync).
	OnSync func(ctx context.Context, key string, res reconcile.SyncResult, err error)
	// Metrics, if set, is registered in controller-runtime's registry
	// (sigs.k8s.io/controller-runtime/pkg/metrics.Registry, which the
	// manager's metrics server serves) and receives every sync's result
	// ([Reconciler].Metrics). Build it with telemetry.Instrument from the
	// Config of the Controller.
	Metrics *telemetry.Collector
	// NewReconciler, if set, builds the reconciler the controller runs
	// instead of the [Reconciler] Register builds: yours, for an owner
	// that has more to it than pods (a Service, a PodDisruptionBudget, a
	// finalizer), in the shape kubebuilder scaffolds. It is called once,
	// with mgr.GetClient() and the pod step: that [Reconciler] (Backoff,
	// OnSync and Metrics set), which your Reconcile must call for every
	// request, whatever else it does or skips, since the pod events
	// enqueue the owner and only the pod step acts on them; join its
	// result with yours with [Combine]. The pod step keeps every guard of
	// reconcile.Controller.Sync (the sync guard, the consistency gate, the
	// fence, the creation breaker) and creates nothing for an owner being
	// deleted, so your finalizer can be removed in the same Reconcile. The
	// Controller still sees every owner and pod event, through the
	// watches, whatever your Reconcile returns. Nil: the pod step alone.
	// A NewReconciler that returns nil is an error.
	NewReconciler func(c client.Client, pods crreconcile.Reconciler) crreconcile.Reconciler
	// Owns are the kinds your reconciler creates with a controller
	// reference to the owner (e.g. &corev1.Service{}): their creates,
	// updates and deletes enqueue that owner, as a builder's Owns does
	// (handler.EnqueueRequestForOwner with OnlyControllerOwner), and the
	// manager caches them. Pods need no entry: Register watches them.
	Owns []client.Object
}

// Register builds a controller named name in mgr that watches owners of
// type T and pods through [OwnerHandler] and [PodHandler] and reconciles
// with [Reconciler] (its Backoff set), or with your reconciler around it
// (Options.NewReconciler, with the kinds it owns watched: Options.Owns),
// and returns it: add watches of other
// kinds, each with its own predicates, with its Watch method (see the
// example). The two watches take no predicate on purpose: every pod event
// settles expectations, and every owner event the Controller's memory of
// it; filter the owners a manager sees with its cache options instead
// (cache.Options.ByObject). Register also adds the field indexes [Pods]
// and [Owners] read ([AddIndexes]) to mgr.GetCache(), keeping indexes
// already there, so call it before mgr.Start; the Controller's lookups
// must read mgr.GetClient() (as [NewConfig]'s do) to use them.
func Register[T reconcile.Object](mgr manager.Manager, name string, c *reconcile.Controller[T], opts Options) (controller.Controller, error) {
	if mgr == nil || c == nil {
		return nil, errors.New("ctrlruntime: Register needs a manager and a Controller")
	}
	if opts.Controller.Reconciler != nil {
		return nil, errors.New("ctrlruntime: Register: Options.Controller.Reconciler must be nil")
	}
	owner, err := newOf[T]()
	if err != nil {
		return nil, err
	}
	if err := AddIndexes[T](context.Background(), mgr.GetCache()); err != nil {
		return nil, err
	}
	if err := registerMetrics(metrics.Registry, opts.Metrics); err != nil {
		return nil, err
	}
	pods := Reconciler[T]{
		Controller: c,
		Backoff:    workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request](),
		OnSync:     opts.OnSync,
		Metrics:    opts.Metrics,
	}
	var r crreconcile.Reconciler = pods
	if opts.NewReconciler != nil {
		r = opts.NewReconciler(mgr.GetClient(), pods)
		if r == nil {
			return nil, errors.New("ctrlruntime: Register: Options.NewReconciler returned nil")
		}
	}
	b := builder.ControllerManagedBy(mgr).Named(name).WithOptions(opts.controllerOptions()).
		WatchesRawSource(source.Kind(mgr.GetCache(), owner, OwnerHandler(c))).
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.Pod{}, PodHandler(c)))
	if len(opts.Owns) > 0 {
		// handler.EnqueueRequestForOwner panics on an owner type the
		// scheme does not know: say so instead.
		if _, _, err := mgr.GetScheme().ObjectKinds(owner); err != nil {
			return nil, fmt.Errorf("ctrlruntime: Register: Options.Owns: %w", err)
		}
	}
	for _, obj := range opts.Owns {
		if obj == nil {
			return nil, errors.New("ctrlruntime: Register: a nil object in Options.Owns")
		}
		b = b.Watches(obj, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner()))
	}
	return b.Build(r)
}

// registerMetrics registers m (if any) in reg; m already there is no error.
func registerMetrics(reg prometheus.Registerer, m *telemetry.Collector) error {
	if m == nil {
		return nil
	}
	err := reg.Register(m)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) && already.ExistingCollector == prometheus.Collector(m) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ctrlruntime: Register: registering the metrics: %w", err)
	}
	return nil
}

// controllerOptions returns Controller with the number of workers set.
func (opts Options) controllerOptions() controller.Options {
	copts := opts.Controller
	switch {
	case opts.Workers > 0:
		copts.MaxConcurrentReconciles = opts.Workers
	case copts.MaxConcurrentReconciles <= 0:
		copts.MaxConcurrentReconciles = DefaultWorkers
	}
	return copts
}
