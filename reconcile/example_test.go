package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// A ReplicaSet controller: the Controller built once from its wiring, the
// informer handlers feeding it, and the worker's sync. exAPI is a tiny
// in-memory API server and informer cache standing in for client-go (the
// adapters module provides the real ones).
func Example() {
	ctx := context.Background()
	api := newExAPI()
	rs := exReplicaSet("web", 3)
	api.owners[rs.Name] = rs

	cfg := reconcile.ReplicaSets() // Kind, Describe and upstream's Status for apps/v1 ReplicaSets
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = exOwners{api}, api, podClient{api, api}
	cfg.Cluster.CachesSynced = func() bool { return true } // the example's maps are complete from the start
	cfg.Cluster.StatusWriter = api                         // UpdateStatus
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}

	// The worker: Sync returns one error; terminal ones are not retried.
	sync := func() {
		res, err := ctrl.Sync(ctx, "default/web")
		switch {
		case errors.Is(err, reconcile.ErrTerminal):
			fmt.Println("giving up:", err) // queue.Forget(key)
		case err != nil:
			fmt.Println("retry:", err) // queue.AddRateLimited(key)
		default:
			fmt.Printf("satisfied=%t created=%d deleted=%d status.replicas=%d requeueAfter=%v\n",
				res.Expectations.Satisfied, len(res.Outcome.Created), len(res.Outcome.Deleted), api.owners["web"].Status.Replicas, res.RequeueAfter)
		}
	}

	sync()                       // creates 3 pods (slow start: 1, then 2)
	sync()                       // waits: the informer has not shown them yet
	api.deliver(ctrl.PodAdded)   // the informer's add handler
	sync()                       // satisfied: nothing to do
	api.scale("web", 1)          // an owner update event would enqueue the key
	sync()                       // deletes 2
	api.deliver(ctrl.PodDeleted) // the informer's delete handler
	sync()

	// The owner is deleted: the delete handler forgets everything about it.
	ctrl.OwnerDeleted(api.remove("web"))
	fmt.Println("owners remembered:", ctrl.Len())
	// Output:
	// satisfied=true created=3 deleted=0 status.replicas=0 requeueAfter=0s
	// satisfied=false created=0 deleted=0 status.replicas=0 requeueAfter=0s
	// satisfied=true created=0 deleted=0 status.replicas=3 requeueAfter=0s
	// satisfied=true created=0 deleted=2 status.replicas=3 requeueAfter=0s
	// satisfied=true created=0 deleted=0 status.replicas=1 requeueAfter=0s
	// owners remembered: 0
}

// NewController refuses a Config with a missing piece of wiring, naming it;
// there is no default owner kind.
func ExampleNewController() {
	var cfg reconcile.Config[*appsv1.ReplicaSet]
	_, err := reconcile.NewController(cfg)
	fmt.Println(err)

	cfg = reconcile.ReplicaSets()
	_, err = reconcile.NewController(cfg)
	fmt.Println(err)
	// Output:
	// reconcile: NewController: Config.Kind is required (the owners' group, version and kind; there is no default: use ReplicaSets() for apps/v1 ReplicaSets)
	// reconcile: NewController: Config.Cluster.Owners is required (the adapters fill Config.Cluster: clientgo.NewConfig, ctrlruntime.NewConfig)
}

// A custom resource that owns pods: Kind and Describe tell the Controller
// what it is; its status is written from SyncResult.Counts and a
// ReplicaFailure-style condition.
func ExampleNewController_customResource() {
	ctx := context.Background()
	api := newExAPI()
	ps := &exPodSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cache", UID: "uid-cache"}, Replicas: 2}
	owners := exPodSets{"cache": ps}

	ctrl, err := reconcile.NewController(reconcile.Config[*exPodSet]{
		Kind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "PodSet"},
		Describe: func(ps *exPodSet) (reconcile.Owner, error) {
			labels := map[string]string{"podset": ps.Name}
			return reconcile.Owner{
				Replicas: ps.Replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
			}, nil
		},
		// Status is pure: it computes, the StatusWriter writes.
		Status: func(ps *exPodSet, res reconcile.SyncResult) (*exPodSet, bool) {
			conds, changed := status.SetReplicaFailure(ps.Conditions, res.ManageErr, res.Diff, ps.Generation, res.Now)
			if !changed && ps.ReadyReplicas == res.Counts.Ready && ps.StatusReplicas == res.Counts.Replicas {
				return nil, false
			}
			next := ps.DeepCopy()
			next.Conditions, next.StatusReplicas, next.ReadyReplicas = conds, res.Counts.Replicas, res.Counts.Ready
			return next, true
		},
		Cluster: reconcile.Cluster[*exPodSet]{
			Owners:    owners,
			Pods:      api,
			PodClient: api,
			// The example's maps are complete from the start.
			CachesSynced: func() bool { return true },
			StatusWriter: owners, // exPodSets.WriteStatus
		},
	})
	if err != nil {
		panic(err)
	}
	res, err := ctrl.Sync(ctx, "default/cache")
	fmt.Println(len(res.Outcome.Created), err)
	api.deliver(ctrl.PodAdded)
	res, err = ctrl.Sync(ctx, "default/cache")
	fmt.Println(res.Expectations.Satisfied, len(res.Active), err)
	// Output:
	// 2 <nil>
	// status written: replicas=2 ready=0 conditions=0
	// true 2 <nil>
}

// Permanent failures satisfy errors.Is(err, ErrTerminal): a workqueue
// forgets the key instead of retrying it forever.
func ExampleErrTerminal() {
	api := newExAPI()
	rs := exReplicaSet("web", 1)
	rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	api.owners[rs.Name] = rs
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = exOwners{api}, api, podClient{api, api}
	cfg.Cluster.CachesSynced = func() bool { return true } // the example's maps are complete from the start
	cfg.Cluster.StatusWriter = api
	ctrl, _ := reconcile.NewController(cfg)
	_, err := ctrl.Sync(context.Background(), "default/web")
	fmt.Println(errors.Is(err, reconcile.ErrTerminal))
	// Output:
	// true
}

// An owner spec that apps/v1 would reject for a ReplicaSet — here a
// selector with a typo — is terminal in its first sync: no pod is created,
// and the status carries the reason, with the field path.
func ExampleOwner_Validate() {
	rs := exReplicaSet("web", 2)
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wbe"}}
	owner := reconcile.ReplicaSetOwner(rs)
	for _, e := range owner.Validate() {
		fmt.Println(e.Field + ": " + e.Detail)
	}

	api := newExAPI()
	api.owners[rs.Name] = rs
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = exOwners{api}, api, podClient{api, api}
	cfg.Cluster.CachesSynced = func() bool { return true } // the example's maps are complete from the start
	cfg.Cluster.StatusWriter = api
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}
	res, err := ctrl.Sync(context.Background(), "default/web")
	fmt.Println(errors.Is(err, reconcile.ErrInvalidSpec), errors.Is(err, reconcile.ErrTerminal), len(res.Outcome.Created))
	cond := api.owners["web"].Status.Conditions[0]
	fmt.Println(cond.Type, cond.Status)
	// Output:
	// spec.template.metadata.labels: `selector` does not match template `labels`
	// true true 0
	// ReplicaFailure True
}

// The consistency gate (R-10.9), upstream v1.37's default: given the
// informer caches' versions, Sync defers while the pod cache has not seen
// the controller's own creates — reading nothing — and runs once it has.
// The deferral is an error for the workqueue to retry with backoff.
func ExampleCacheVersions() {
	ctx := context.Background()
	api := newExAPI()
	api.owners["web"] = exReplicaSet("web", 2)
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = exOwners{api}, api, podClient{api, api}
	cfg.Cluster.CachesSynced = func() bool { return true } // the example's maps are complete from the start
	cfg.Cluster.StatusWriter = api
	// client-go: podInformer.GetIndexer().LastStoreSyncResourceVersion
	cfg.Cluster.CacheVersions.Pods = api.cacheVersion
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}

	res, err := ctrl.Sync(ctx, "default/web")
	fmt.Println("created:", len(res.Outcome.Created), err)
	_, err = ctrl.Sync(ctx, "default/web") // an owner update, before the pod events
	var stale *expectations.StaleCacheError
	if errors.As(err, &stale) {
		fmt.Printf("deferred: %s cache at %s, our write at %s\n", stale.Resource, stale.Read, stale.Written)
	}
	api.deliver(ctrl.PodAdded)
	res, err = ctrl.Sync(ctx, "default/web")
	fmt.Println("active:", len(res.Active), err)
	// Output:
	// created: 2 <nil>
	// deferred: pods cache at 100, our write at 102
	// active: 2 <nil>
}

// The primitive layer: ManageReplicas creates or deletes towards the
// desired count for callers that do their own wiring.
func ExampleManager_ManageReplicas() {
	api := newExAPI()
	m := &reconcile.Manager{Pods: api}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(exReplicaSet("web", 3)), nil, nil)
	fmt.Println(len(out.Created), out.Batches, err)
	adds, _, _ := m.Tracker().Pending("default/web")
	fmt.Println("creations still expected:", adds)
	// Output:
	// 3 [1 2] <nil>
	// creations still expected: 3
}

func exReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
}

// exAPI is an in-memory stand-in for an API server and its informer
// caches: it stores pods (naming them from GenerateName), queues one watch
// event per change and delivers them on demand; ReplicaSets live in a map.
type exAPI struct {
	mu      sync.Mutex
	owners  map[string]*appsv1.ReplicaSet
	pods    map[string]*corev1.Pod
	cache   map[string]*corev1.Pod
	pending []*corev1.Pod
	seq     int
	synced  int // the cache's resourceVersion: the list's (100), then the last event's
}

func newExAPI() *exAPI {
	return &exAPI{owners: map[string]*appsv1.ReplicaSet{}, pods: map[string]*corev1.Pod{}, cache: map[string]*corev1.Pod{}, synced: 100}
}

// cacheVersion is the informer cache's resourceVersion, as client-go's
// LastStoreSyncResourceVersion reports it.
func (a *exAPI) cacheVersion() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strconv.Itoa(a.synced)
}

func (a *exAPI) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := pod.DeepCopy()
	a.seq++
	if p.Name == "" {
		p.Name = p.GenerateName + strconv.Itoa(a.seq)
	}
	p.ResourceVersion = strconv.Itoa(100 + a.seq)
	a.pods[p.Name] = p
	a.pending = append(a.pending, p)
	return p, nil
}

func (a *exAPI) DeletePod(_ context.Context, pod *corev1.Pod) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pods, pod.Name)
	a.pending = append(a.pending, pod)
	return nil
}

func (a *exAPI) PatchPod(_ context.Context, pod *corev1.Pod, _ []byte) (*corev1.Pod, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod.Name) // no orphans here
}

// List returns the informer cache's pods, in name order.
func (a *exAPI) List(string) ([]*corev1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(a.cache))
	for _, p := range a.cache {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// deliver updates the cache with the pending changes and hands each to
// handler, like an informer; a controller would enqueue the requests.
func (a *exAPI) deliver(handler func(*corev1.Pod) []reconcile.SyncRequest) {
	a.mu.Lock()
	pending := a.pending
	a.pending = nil
	for _, p := range pending {
		if _, live := a.pods[p.Name]; live {
			a.cache[p.Name] = p
		} else {
			delete(a.cache, p.Name)
		}
		if rv, err := strconv.Atoi(p.ResourceVersion); err == nil {
			a.synced = max(a.synced, rv)
		}
	}
	a.mu.Unlock()
	for _, p := range pending {
		handler(p)
	}
}

// exOwners is the Owners of the exAPI's ReplicaSets.
type exOwners struct{ a *exAPI }

func (o exOwners) Get(_, name string) (*appsv1.ReplicaSet, error) {
	o.a.mu.Lock()
	defer o.a.mu.Unlock()
	rs, ok := o.a.owners[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "replicasets"}, name)
	}
	return rs, nil
}

func (o exOwners) List(string) ([]*appsv1.ReplicaSet, error) {
	o.a.mu.Lock()
	defer o.a.mu.Unlock()
	var out []*appsv1.ReplicaSet
	for _, rs := range o.a.owners {
		out = append(out, rs)
	}
	return out, nil
}

func (o exOwners) GetLive(_ context.Context, ns, name string) (*appsv1.ReplicaSet, error) {
	return o.Get(ns, name)
}

func (a *exAPI) scale(name string, replicas int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rs := a.owners[name].DeepCopy()
	rs.Spec.Replicas = &replicas
	rs.Generation++
	a.owners[name] = rs
}

// WriteStatus is UpdateStatus (a reconcile.StatusWriter): it stores next's
// status and returns the stored object.
func (a *exAPI) WriteStatus(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rs := a.owners[next.Name].DeepCopy()
	rs.Status = *next.Status.DeepCopy()
	a.owners[next.Name] = rs
	return rs, nil
}

func (a *exAPI) remove(name string) *appsv1.ReplicaSet {
	a.mu.Lock()
	defer a.mu.Unlock()
	rs := a.owners[name]
	delete(a.owners, name)
	return rs
}

// exPodSet is a minimal custom resource that owns pods.
type exPodSet struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Replicas   int32
	Conditions []metav1.Condition
	// the status's counts
	StatusReplicas, ReadyReplicas int32
}

func (p *exPodSet) DeepCopy() *exPodSet {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Conditions = append([]metav1.Condition(nil), p.Conditions...)
	return &c
}

func (p *exPodSet) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// exPodSets is the Owners and the StatusWriter of exPodSets, by name.
type exPodSets map[string]*exPodSet

func (s exPodSets) Get(_, name string) (*exPodSet, error) {
	if ps, ok := s[name]; ok {
		return ps, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "podsets"}, name)
}

func (s exPodSets) List(string) ([]*exPodSet, error) {
	var out []*exPodSet
	for _, ps := range s {
		out = append(out, ps)
	}
	return out, nil
}

func (s exPodSets) GetLive(_ context.Context, ns, name string) (*exPodSet, error) {
	return s.Get(ns, name)
}

// WriteStatus stores next, as the API server's answer to a status update.
func (s exPodSets) WriteStatus(_ context.Context, next *exPodSet) (*exPodSet, error) {
	fmt.Printf("status written: replicas=%d ready=%d conditions=%d\n", next.StatusReplicas, next.ReadyReplicas, len(next.Conditions))
	s[next.Name] = next
	return next, nil
}
