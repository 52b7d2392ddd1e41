package conformance

import (
	"context"
	"errors"
	"flag"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubernetes/pkg/controller/replicaset"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// The test-side wiring of a reconcile.Controller over client-go listers (and
// a clientset for the live reads), and access to the parts of the real
// ReplicaSetController that the event and controller differentials observe.

// rsOwners is reconcile.Owners over a ReplicaSet lister; GetLive reads
// through client (nil: from the lister).
type rsOwners struct {
	lister appslisters.ReplicaSetLister
	client kubernetes.Interface
}

func (o rsOwners) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	return o.lister.ReplicaSets(namespace).Get(name)
}

func (o rsOwners) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	return o.lister.ReplicaSets(namespace).List(labels.Everything())
}

func (o rsOwners) GetLive(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	if o.client == nil {
		return o.Get(namespace, name)
	}
	return o.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// listerPods is reconcile.Pods over a pod lister.
type listerPods struct{ lister corelisters.PodLister }

func (p listerPods) List(namespace string) ([]*corev1.Pod, error) {
	return p.lister.Pods(namespace).List(labels.Everything())
}

var errNoWrites = errors.New("conformance: no writes expected here")

// eventsOnlyConfig is a ReplicaSet Config for a Controller that only handles
// events: every write fails.
func eventsOnlyConfig(rsLister appslisters.ReplicaSetLister, podLister corelisters.PodLister, clock reconcile.Clock) reconcile.Config[*appsv1.ReplicaSet] {
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = rsOwners{lister: rsLister}
	cfg.Cluster.Pods = listerPods{lister: podLister}
	cfg.Cluster.CachesSynced = func() bool { return true } // the listers are filled before the first event
	cfg.Cluster.PodClient = noWrites{}
	cfg.Cluster.StatusWriter = noWrites{}
	cfg.Clock = clock
	return cfg
}

// noWrites is a reconcile.PodClient and a ReplicaSet StatusWriter whose
// every call fails with errNoWrites.
type noWrites struct{}

func (noWrites) CreatePod(context.Context, *corev1.Pod) (*corev1.Pod, error) { return nil, errNoWrites }
func (noWrites) DeletePod(context.Context, *corev1.Pod) error                { return errNoWrites }
func (noWrites) PatchPod(context.Context, *corev1.Pod, []byte) (*corev1.Pod, error) {
	return nil, errNoWrites
}
func (noWrites) WriteStatus(context.Context, *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	return nil, errNoWrites
}

// upstreamField returns a pointer to the unexported field name of the real
// controller, of type T (checked), to read or replace it.
func upstreamField[T any](rsc *replicaset.ReplicaSetController, name string) *T {
	f := reflect.ValueOf(rsc).Elem().FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[T]() {
		panic("conformance: ReplicaSetController has no field " + name + " of type " + reflect.TypeFor[T]().String())
	}
	return (*T)(unsafe.Pointer(f.UnsafeAddr()))
}

// enqueued is one key a controller asked its queue for: at once (after 0)
// or after a delay.
type enqueued struct {
	key   string
	after time.Duration
}

// enqueueRecorder replaces the real controller's workqueue (its unexported
// field queue) to record what the event handlers enqueue. The embedded
// queue is the controller's own, for the methods the handlers never call;
// AddRateLimited is recorded with after -1 (never expected from a handler).
type enqueueRecorder struct {
	workqueue.TypedRateLimitingInterface[string]
	mu  sync.Mutex
	got []enqueued
}

func (q *enqueueRecorder) Add(key string) { q.record(key, 0) }

func (q *enqueueRecorder) AddAfter(key string, d time.Duration) {
	if d < 0 { // the delaying queue adds these at once
		d = 0
	}
	q.record(key, d)
}

func (q *enqueueRecorder) AddRateLimited(key string) { q.record(key, -1) }

func (q *enqueueRecorder) record(key string, d time.Duration) {
	q.mu.Lock()
	q.got = append(q.got, enqueued{key, d})
	q.mu.Unlock()
}

// take returns and clears what was recorded.
func (q *enqueueRecorder) take() []enqueued {
	q.mu.Lock()
	defer q.mu.Unlock()
	got := q.got
	q.got = nil
	return got
}

// recordQueue puts a enqueueRecorder in place of rsc's workqueue.
func recordQueue(rsc *replicaset.ReplicaSetController) *enqueueRecorder {
	f := upstreamField[workqueue.TypedRateLimitingInterface[string]](rsc, "queue")
	q := &enqueueRecorder{TypedRateLimitingInterface: *f}
	*f = q
	return q
}

// controllerChecksDivisor: the differential that drives two whole
// controllers through a scenario costs about 18 ms a check under -race on
// the 2-core machine (TestControllerMatchesReplicaSetController's rapid
// line in go test -v), ten times or more a pure differential's check; it
// runs one check for every controllerChecksDivisor of the module's knob
// (-rapid.checks): 1000 checks, some 5,000 cases and 18 s of make
// conformance-test.
const controllerChecksDivisor = 2

// withChecksDivided runs f with rapid's -rapid.checks divided by div (at
// least 1), so that a heavy differential scales with the module's one knob
// but runs fewer checks than the pure ones. The flag is restored
// afterwards; the package's tests do not run in parallel, so nothing reads
// it meanwhile.
func withChecksDivided(div int, f func()) {
	fl := flag.Lookup("rapid.checks")
	old := fl.Value.String()
	n, err := strconv.Atoi(old)
	if err != nil {
		f()
		return
	}
	_ = fl.Value.Set(strconv.Itoa(max(1, n/div)))
	defer func() { _ = fl.Value.Set(old) }()
	f()
}
