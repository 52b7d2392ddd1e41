package ctrlruntimetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// DefaultStart is the time Env.Clock starts at when Options.Start is zero.
var DefaultStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// MaxReconciles bounds the reconciles of one [Env.Settle]: a controller
// that is still busy after that many is reported, not looped on.
const MaxReconciles = 1000

// Options configure [New]. The zero value is an empty fake client over
// client-go's scheme, with the clock at DefaultStart.
type Options struct {
	// Scheme knows pods and the owner type with its list type (e.g. your
	// CRD's AddToScheme applied to a new scheme). Nil: client-go's scheme,
	// for built-in owners such as ReplicaSets.
	Scheme *runtime.Scheme
	// Objects are in the fake client from the start; the pods and owners
	// among them are delivered as added before the first reconcile.
	Objects []client.Object
	// Interceptor injects faults (controller-runtime's interceptor): it
	// sees every call below the event feed, so a write it fails makes no
	// event. Its client argument is the plain fake client.
	Interceptor interceptor.Funcs
	// Config is given to ctrlruntime.NewConfig, which builds the Env's
	// Config as it builds a manager's: OwnedPods' labels stamped,
	// EventPerBatch, NoCacheVersions (as ConfigOptions documents it), and
	// whatever else its options turn on. A nil Recorder
	// records into the Env (Env.Events); a Recorder of yours receives the
	// events instead. The fake client holds every pod: OwnedPods restricts
	// what the Controller creates, not what the client lists.
	Config ctrlruntime.ConfigOptions
	// StartUnsynced keeps the Env's caches unsynced until the first
	// Deliver (or Settle) delivers the first list, as a manager's
	// informers are before their first list: a Reconcile before then is
	// refused (reconcile.ErrNotSynced, R-14.8), which is how to test a
	// reconciler's handling of it. The zero value: the caches have synced
	// at New, as they have when a manager starts its workers.
	StartUnsynced bool
	// Start is the fake clock's time at New; zero: DefaultStart.
	Start time.Time
	// NewReconciler, if set, builds the reconciler Reconcile and Settle
	// run instead of ctrlruntime.Reconciler: yours, as
	// ctrlruntime.Options.NewReconciler builds it under a manager (pass
	// the same function to both). New calls it once, with Env.Client and
	// the pod step: a ctrlruntime.Reconciler over Env.Controller on
	// Env.Clock. The Controller's events do not depend on it: Deliver
	// hands it every pod and owner event whatever your Reconcile does.
	// Nil: the pod step alone. A NewReconciler that returns nil is an
	// error of New.
	NewReconciler func(c client.Client, pods crreconcile.Reconciler) crreconcile.Reconciler
	// Owns are the kinds your reconciler creates with a controller
	// reference to the owner, as in ctrlruntime.Options.Owns (e.g.
	// &corev1.Service{}): each successful write of one through Env.Client
	// becomes an event, delivered in write order with the others, that
	// queues its controller when that is of the owner's kind, as a
	// builder's Owns does. The Controller sees none of them; the Env's
	// cache does not hold them (the client reads them, always current).
	Owns []client.Object
}

// Env is a Controller for owners of type T on controller-runtime's fake
// client, with the events a manager's informers would deliver fed to it
// (see the package documentation). Build it with [New]. Its methods are
// for the test's goroutine; the Client may also be written from the
// Controller's (its creates of one batch run concurrently).
type Env[T reconcile.Object] struct {
	// Client is the fake client the Controller reads and writes through.
	// Every write through it that succeeds becomes an event.
	Client client.WithWatch
	// Clock is the Controller's clock (Config.Clock). Step it to expire
	// expectations or reach a RequeueAfter, then call Settle.
	Clock *clocktesting.FakeClock
	// Controller is what build returned.
	Controller *reconcile.Controller[T]

	base       client.WithWatch // the plain fake client, for the feed's reads
	events     *eventLog
	cache      *envCache              // the informers' stores, for the Config's CacheVersions
	reconciler crreconcile.Reconciler // what Reconcile runs
	kind       schema.GroupVersionKind
	owns       []reflect.Type // the types of Options.Owns

	mu       sync.Mutex // guards pending, feedErrs, uids and names
	pending  []change
	feedErrs []error
	uids     int
	names    map[string]int // the next generated-name number per generateName

	queue  []string             // keys to reconcile now, in order
	queued map[string]bool      // the keys in queue
	later  map[string]time.Time // keys to reconcile at a time
	failed []string             // keys whose last reconcile failed, retried by the next Settle
}

// change is one write, as the informer event it makes.
type change struct {
	old, cur client.Object // nil old: added; nil cur: deleted
}

// New builds an Env: a fake client holding opts.Objects, the Config of a
// controller for T over it, and the Controller build returns from that
// Config (build sets Describe, Status and any tuning, as the code under
// test does with NewConfig's). The Config is ctrlruntime.NewConfig's, given
// a manager whose client (for reads, live reads and writes) is Env.Client
// and whose cache is the Env's (see the package documentation), with
// Config.Clock set to Env.Clock: the consistency gate's CacheVersions, the
// sync guard and the creation breaker's Warning event are there as in
// production, and Expectations.Exact can be turned on. It returns
// NewConfig's and build's errors.
func New[T reconcile.Object](build func(reconcile.Config[T]) (*reconcile.Controller[T], error), opts Options) (*Env[T], error) {
	scheme := opts.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	start := opts.Start
	if start.IsZero() {
		start = DefaultStart
	}
	owner, err := newOf[T]()
	if err != nil {
		return nil, err
	}
	// The fake client's builder panics on a status subresource of a kind
	// the scheme does not know: say so instead.
	for _, obj := range []runtime.Object{owner, &corev1.Pod{}} {
		if _, _, err := scheme.ObjectKinds(obj); err != nil {
			return nil, fmt.Errorf("ctrlruntimetest: New: Options.Scheme: %w", err)
		}
	}
	e := &Env[T]{
		Clock:  clocktesting.NewFakeClock(start),
		events: &eventLog{},
		cache:  newEnvCache(owner),
		names:  map[string]int{},
		queued: map[string]bool{},
		later:  map[string]time.Time{},
	}
	if !opts.StartUnsynced {
		e.cache.markSynced()
	}
	for _, obj := range opts.Owns {
		if obj == nil {
			return nil, errors.New("ctrlruntimetest: New: a nil object in Options.Owns")
		}
		if _, _, err := scheme.ObjectKinds(obj); err != nil {
			return nil, fmt.Errorf("ctrlruntimetest: New: Options.Owns: %w", err)
		}
		e.owns = append(e.owns, reflect.TypeOf(obj))
	}
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjects(opts.Objects...).
		WithStatusSubresource(owner, &corev1.Pod{}).Build()
	e.base = base
	e.Client = interceptor.NewClient(interceptor.NewClient(base, opts.Interceptor), e.feed())

	copts := opts.Config
	if copts.Recorder == nil {
		copts.Recorder = e.events
	}
	cfg, err := ctrlruntime.NewConfig[T](&envManager{client: e.Client, scheme: scheme, cache: e.cache}, copts)
	if err != nil {
		return nil, fmt.Errorf("ctrlruntimetest: New: %w", err)
	}
	cfg.Clock = e.Clock
	e.kind = cfg.Kind
	if e.Controller, err = build(cfg); err != nil {
		return nil, fmt.Errorf("ctrlruntimetest: New: build: %w", err)
	}
	if e.Controller == nil {
		return nil, errors.New("ctrlruntimetest: New: build returned no Controller")
	}
	pods := ctrlruntime.Reconciler[T]{Controller: e.Controller, Clock: e.Clock}
	e.reconciler = pods
	if opts.NewReconciler != nil {
		e.reconciler = opts.NewReconciler(e.Client, pods)
		if e.reconciler == nil {
			return nil, errors.New("ctrlruntimetest: New: Options.NewReconciler returned nil")
		}
	}
	for _, obj := range opts.Objects {
		cur, err := e.current(obj)
		if err == nil {
			e.record(change{cur: cur})
		}
	}
	return e, nil
}

// Reconcile runs one reconcile of key (namespace/name) through
// ctrlruntime.Reconciler, or through yours (Options.NewReconciler), as a
// manager's worker would, and returns its result. It delivers no event:
// call Deliver (or Settle) for that.
func (e *Env[T]) Reconcile(key string) (crreconcile.Result, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		ns, name = "", key
	}
	return e.reconciler.Reconcile(context.Background(), crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
}

// Deliver hands the Controller the events of the writes made since the
// last delivery, in order, each applied to the Env's cache first, as an
// informer does, and queues the owners they name; the caches have synced
// once it returns. Its error is a write whose result could not be read
// back (not expected of the fake client).
func (e *Env[T]) Deliver() error {
	e.mu.Lock()
	pending, errs := e.pending, e.feedErrs
	e.pending, e.feedErrs = nil, nil
	e.mu.Unlock()
	for _, ch := range pending {
		e.cache.apply(ch)
		e.enqueue(e.deliver(ch))
	}
	e.cache.markSynced()
	return errors.Join(errs...)
}

// deliver calls the Controller's event method for ch.
func (e *Env[T]) deliver(ch change) []reconcile.SyncRequest {
	obj := ch.cur
	if obj == nil {
		obj = ch.old
	}
	switch obj.(type) {
	case *corev1.Pod:
		switch {
		case ch.old == nil:
			return e.Controller.PodAdded(ch.cur.(*corev1.Pod))
		case ch.cur == nil:
			return e.Controller.PodDeleted(ch.old.(*corev1.Pod))
		default:
			return e.Controller.PodUpdated(ch.old.(*corev1.Pod), ch.cur.(*corev1.Pod))
		}
	case T:
		switch {
		case ch.old == nil:
			return e.Controller.OwnerAdded(ch.cur.(T))
		case ch.cur == nil:
			return e.Controller.OwnerDeleted(ch.old.(T))
		default:
			return e.Controller.OwnerUpdated(ch.old.(T), ch.cur.(T))
		}
	}
	// An owned kind's: its controllers of the owner's kind, before and
	// after the write, as handler.EnqueueRequestForOwner enqueues them.
	var reqs []reconcile.SyncRequest
	for _, o := range []client.Object{ch.old, ch.cur} {
		if o == nil {
			continue
		}
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.Kind != e.kind.Kind {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != e.kind.Group {
			continue
		}
		reqs = append(reqs, reconcile.SyncRequest{Key: reconcile.OwnerKey(o.GetNamespace(), ref.Name)})
	}
	return reqs
}

// Enqueue queues key (namespace/name) for the next Settle, as an event
// that names it would.
func (e *Env[T]) Enqueue(key string) {
	e.enqueue([]reconcile.SyncRequest{{Key: key}})
}

func (e *Env[T]) enqueue(reqs []reconcile.SyncRequest) {
	for _, r := range reqs {
		if r.After > 0 {
			e.after(r.Key, r.After)
			continue
		}
		if !e.queued[r.Key] {
			e.queued[r.Key] = true
			e.queue = append(e.queue, r.Key)
		}
	}
}

// after schedules key at Clock's now + d, keeping an earlier schedule.
func (e *Env[T]) after(key string, d time.Duration) {
	at := e.Clock.Now().Add(d)
	if cur, ok := e.later[key]; !ok || at.Before(cur) {
		e.later[key] = at
	}
}

// due queues the scheduled keys whose time has come, in key order.
func (e *Env[T]) due() {
	now := e.Clock.Now()
	var keys []string
	for key, at := range e.later {
		if !at.After(now) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		delete(e.later, key)
		e.Enqueue(key)
	}
}

// Settle delivers the pending events and reconciles the queued owners,
// one at a time, delivering the events of each reconcile before the next,
// until nothing is queued: the state a manager reaches once its queue is
// empty, with the Clock where it is. A reconcile's RequeueAfter is
// scheduled on the Clock (Step it, then Settle again); a key whose
// reconcile failed is retried by the next Settle, as a rate-limited retry
// would be later. It returns the errors of the reconciles that failed
// (terminal ones included), joined, and an error when MaxReconciles
// reconciles did not empty the queue.
func (e *Env[T]) Settle() error {
	e.enqueue(keysOf(e.failed))
	e.failed = nil
	var errs []error
	for n := 0; ; n++ {
		if err := e.Deliver(); err != nil {
			errs = append(errs, err)
		}
		e.due()
		if len(e.queue) == 0 {
			return errors.Join(errs...)
		}
		if n == MaxReconciles {
			return errors.Join(append(errs, fmt.Errorf("ctrlruntimetest: Settle: still busy after %d reconciles, queued: %v", MaxReconciles, e.queue))...)
		}
		key := e.queue[0]
		e.queue = e.queue[1:]
		delete(e.queued, key)
		res, err := e.Reconcile(key)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
			if !errors.Is(err, crreconcile.TerminalError(nil)) {
				e.failed = append(e.failed, key)
			}
			continue
		}
		if res.RequeueAfter > 0 {
			e.after(key, res.RequeueAfter)
		}
	}
}

func keysOf(keys []string) []reconcile.SyncRequest {
	reqs := make([]reconcile.SyncRequest, len(keys))
	for i, k := range keys {
		reqs[i] = reconcile.SyncRequest{Key: k}
	}
	return reqs
}

// Pods returns the pods of namespace ("": every namespace) as the fake
// client holds them, sorted by namespace and name.
func (e *Env[T]) Pods(namespace string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := e.base.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("ctrlruntimetest: Pods: %w", err)
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return pods, nil
}

// Events returns the events the Controller's pod client recorded, oldest
// first, each as "<type> <reason> <message>" (e.g. "Normal
// SuccessfulCreate Created pod: web-x2x4z").
func (e *Env[T]) Events() []string {
	return e.events.all()
}

// feed returns the interceptor that turns every successful write of a pod
// or an owner into a change.
func (e *Env[T]) feed() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			e.name(ctx, obj)
			e.stamp(obj)
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			e.written(nil, obj)
			return nil
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			old, _ := e.current(obj)
			if err := c.Update(ctx, obj, opts...); err != nil {
				return err
			}
			e.written(old, obj)
			return nil
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			old, _ := e.current(obj)
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			e.written(old, obj)
			return nil
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			old, _ := e.current(obj)
			if err := c.Delete(ctx, obj, opts...); err != nil {
				return err
			}
			e.written(old, obj)
			return nil
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			old, _ := e.current(obj)
			if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
				return err
			}
			e.written(old, obj)
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			old, _ := e.current(obj)
			if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			e.written(old, obj)
			return nil
		},
	}
}

// name gives obj, about to be created without a name but with a
// generateName, the name generateName + the next number of that prefix,
// written as five or more characters of the alphabet the API server draws
// its random suffixes from ("bcdfghjklmnpqrstvwxz2456789"), skipping a name
// that is taken: web-bbbbb, web-bbbbc, … The fake client would draw five
// random characters instead, and fail a create with AlreadyExists when two
// draws collide (13% of runs at 2,000 pods of one owner: see the package
// documentation). Concurrent
// creates get distinct numbers; which of them gets which depends on their
// order, as on an API server.
func (e *Env[T]) name(ctx context.Context, obj client.Object) {
	prefix := obj.GetGenerateName()
	if obj.GetName() != "" || prefix == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		n := e.names[prefix]
		e.names[prefix] = n + 1
		name := prefix + suffix(n)
		probe, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return // the fake client generates the name, as before
		}
		err := e.base.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, probe)
		switch {
		case apierrors.IsNotFound(err):
			obj.SetName(name)
			return
		case err != nil:
			return // cannot tell (a kind the scheme does not know): the fake client's create answers
		}
	}
}

// suffixAlphabet is the API server's: no vowels, no 0, 1 or 3.
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// suffix writes n in base len(suffixAlphabet) with at least five digits.
func suffix(n int) string {
	base := len(suffixAlphabet)
	var digits []byte
	for n > 0 || len(digits) < 5 {
		digits = append(digits, suffixAlphabet[n%base])
		n /= base
	}
	slices.Reverse(digits)
	return string(digits)
}

// stamp gives obj, about to be created, what the API server would: a UID
// and a creation timestamp, when it has none.
func (e *Env[T]) stamp(obj client.Object) {
	if !e.fed(obj) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if obj.GetUID() == "" {
		e.uids++
		obj.SetUID(types.UID(fmt.Sprintf("ctrlruntimetest-uid-%d", e.uids)))
	}
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		obj.SetCreationTimestamp(metav1.NewTime(e.Clock.Now()))
	}
}

// fed reports whether obj's writes become events: pods, owners and the
// kinds of Options.Owns.
func (e *Env[T]) fed(obj client.Object) bool {
	switch obj.(type) {
	case *corev1.Pod, T:
		return true
	}
	return slices.Contains(e.owns, reflect.TypeOf(obj))
}

// current returns the stored copy of obj (nil and an error when there is
// none, or when obj's writes make no event).
func (e *Env[T]) current(obj client.Object) (client.Object, error) {
	if !e.fed(obj) {
		return nil, errors.New("not fed")
	}
	cur := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if err := e.base.Get(context.Background(), client.ObjectKeyFromObject(obj), cur); err != nil {
		return nil, err
	}
	return cur, nil
}

// written records the change a successful write of obj made, from old
// (nil: none before).
func (e *Env[T]) written(old, obj client.Object) {
	if !e.fed(obj) {
		return
	}
	cur, err := e.current(obj)
	switch {
	case apierrors.IsNotFound(err):
		if old != nil {
			e.record(change{old: old})
		}
	case err != nil:
		e.mu.Lock()
		defer e.mu.Unlock()
		e.feedErrs = append(e.feedErrs, fmt.Errorf("ctrlruntimetest: reading back %T %s: %w", obj, client.ObjectKeyFromObject(obj), err))
	default:
		e.record(change{old: old, cur: cur})
	}
}

func (e *Env[T]) record(ch change) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending = append(e.pending, ch)
}

// newOf returns a new empty T (a pointer type).
func newOf[T reconcile.Object]() (T, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		var zero T
		return zero, fmt.Errorf("ctrlruntimetest: %v is not a pointer type", typ)
	}
	return reflect.New(typ.Elem()).Interface().(T), nil
}
