package reconcile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// The fakes a Controller is built from in these tests: owners in a map,
// pods in a slice (or a simulated cluster's informer cache), a patcher that
// applies adoption and release patches, and a recording status writer.

var rsResource = schema.GroupResource{Group: "apps", Resource: "replicasets"}

// recOwners is an Owners of ReplicaSets kept in maps; safe for concurrent
// use. GetLive answers from live when an entry is there, else from cache.
type recOwners struct {
	mu        sync.Mutex
	cache     map[string]*appsv1.ReplicaSet
	live      map[string]*appsv1.ReplicaSet
	getErr    error // returned by Get (instead of NotFound) when set
	listErr   error
	liveErr   error
	liveCalls int
}

var _ reconcile.OwnersByController[*appsv1.ReplicaSet] = (*recOwners)(nil)

func newRecOwners(rss ...*appsv1.ReplicaSet) *recOwners {
	o := &recOwners{cache: map[string]*appsv1.ReplicaSet{}, live: map[string]*appsv1.ReplicaSet{}}
	for _, rs := range rss {
		o.set(rs)
	}
	return o
}

func (o *recOwners) set(rs *appsv1.ReplicaSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cache[reconcile.OwnerKey(rs.Namespace, rs.Name)] = rs
}

func (o *recOwners) remove(rs *appsv1.ReplicaSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.cache, reconcile.OwnerKey(rs.Namespace, rs.Name))
}

func (o *recOwners) setLive(rs *appsv1.ReplicaSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.live[reconcile.OwnerKey(rs.Namespace, rs.Name)] = rs
}

func (o *recOwners) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.getErr != nil {
		return nil, o.getErr
	}
	rs, ok := o.cache[reconcile.OwnerKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(rsResource, name)
	}
	return rs, nil
}

func (o *recOwners) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.listErr != nil {
		return nil, o.listErr
	}
	var out []*appsv1.ReplicaSet
	for _, rs := range o.cache {
		if rs.Namespace == namespace {
			out = append(out, rs)
		}
	}
	slices.SortFunc(out, func(a, b *appsv1.ReplicaSet) int { return cmpString(a.Name, b.Name) })
	return out, nil
}

func (o *recOwners) ListByController(namespace string, uid types.UID) ([]*appsv1.ReplicaSet, error) {
	all, err := o.List(namespace)
	var out []*appsv1.ReplicaSet
	for _, rs := range all {
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.UID == uid {
			out = append(out, rs)
		}
	}
	return out, err
}

func (o *recOwners) GetLive(_ context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.liveCalls++
	if o.liveErr != nil {
		return nil, o.liveErr
	}
	key := reconcile.OwnerKey(namespace, name)
	if rs, ok := o.live[key]; ok {
		return rs, nil
	}
	if rs, ok := o.cache[key]; ok {
		return rs, nil
	}
	return nil, apierrors.NewNotFound(rsResource, name)
}

func (o *recOwners) liveReads() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.liveCalls
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// recPodList is a Pods over a slice; safe for concurrent use.
type recPodList struct {
	mu    sync.Mutex
	pods  []*corev1.Pod
	err   error
	calls int
}

func (l *recPodList) List(namespace string) ([]*corev1.Pod, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.err != nil {
		return nil, l.err
	}
	var out []*corev1.Pod
	for _, p := range l.pods {
		if p == nil || p.Namespace == namespace { // nil passes: the Controller must cope
			out = append(out, p)
		}
	}
	return out, nil
}

// podsFunc adapts a function to reconcile.Pods.
type podsFunc func(namespace string) ([]*corev1.Pod, error)

func (f podsFunc) List(namespace string) ([]*corev1.Pod, error) { return f(namespace) }

// clusterPods reads a simulated cluster's informer cache: List the
// namespace, ListByController its index by controller reference.
type clusterPods struct{ c *cluster.Cluster }

var _ reconcile.PodsByController = clusterPods{}

func (p clusterPods) List(namespace string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, pod := range p.c.Informer.Pods() {
		if pod.Namespace == namespace {
			out = append(out, pod)
		}
	}
	return out, nil
}

func (p clusterPods) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	return p.c.Informer.ByController(namespace, kind, name, uid), nil
}

// informerPods reads a simulated cluster's informer cache through its
// index by controller reference.
func informerPods(c *cluster.Cluster) reconcile.PodsByController {
	return clusterPods{c: c}
}

// patchCall is one PatchPod call as the recPatcher saw it.
type patchCall struct {
	Pod  string // pod key
	Data string
}

// recPatcher applies adoption and release patches: to the pod in api when
// set (Get, apply, Update), else to a copy of the pod passed in. Err, if
// set, decides a call's error first. A patch whose metadata.uid differs
// from the pod's UID fails with Conflict, as the API server's precondition.
type recPatcher struct {
	api *cluster.API
	Err func(pod *corev1.Pod, data []byte) error

	mu    sync.Mutex
	calls []patchCall
}

func (r *recPatcher) PatchPod(_ context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	r.mu.Lock()
	r.calls = append(r.calls, patchCall{Pod: reconcile.PodKey(pod), Data: string(data)})
	r.mu.Unlock()
	if r.Err != nil {
		if err := r.Err(pod, data); err != nil {
			return nil, err
		}
	}
	cur := pod.DeepCopy()
	if r.api != nil {
		got, ok := r.api.Get(pod.Namespace, pod.Name)
		if !ok {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod.Name)
		}
		cur = got
	}
	if err := applyOwnerPatch(cur, data); err != nil {
		return nil, err
	}
	if r.api != nil {
		return r.api.Update(cur)
	}
	return cur, nil
}

func (r *recPatcher) recorded() []patchCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]patchCall(nil), r.calls...)
}

// applyOwnerPatch applies the two strategic-merge patch shapes the
// Controller sends: add ownerReferences (merged by uid), or delete the one
// with a uid ("$patch": "delete"); metadata.uid is a precondition.
func applyOwnerPatch(pod *corev1.Pod, data []byte) error {
	var p struct {
		Metadata struct {
			UID             types.UID        `json:"uid"`
			OwnerReferences []map[string]any `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if p.Metadata.UID != pod.UID {
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name,
			fmt.Errorf("precondition failed: uid %s, pod has %s", p.Metadata.UID, pod.UID))
	}
	for _, ref := range p.Metadata.OwnerReferences {
		uid := types.UID(fmt.Sprint(ref["uid"]))
		pod.OwnerReferences = slices.DeleteFunc(pod.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == uid })
		if ref["$patch"] == "delete" {
			continue
		}
		raw, _ := json.Marshal(ref)
		var or metav1.OwnerReference
		if err := json.Unmarshal(raw, &or); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		pod.OwnerReferences = append(pod.OwnerReferences, or)
	}
	return nil
}

// recStatus is a Config.Status and StatusWriter that records the Status
// calls. Status asks for a write (a copy of the owner) when ret or err is
// set; the write then fails with err, or returns ret(next), the server's
// answer. With neither set, nothing needs writing.
type recStatus struct {
	mu    sync.Mutex
	err   error
	ret   func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet
	calls []reconcile.SyncResult
	sent  int // WriteStatus calls
}

func (s *recStatus) status(rs *appsv1.ReplicaSet, res reconcile.SyncResult) (*appsv1.ReplicaSet, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, res)
	return rs.DeepCopy(), s.err != nil || s.ret != nil
}

func (s *recStatus) WriteStatus(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent++
	if s.err != nil {
		return nil, s.err
	}
	return s.ret(next), nil
}

// sentWrites is the number of WriteStatus calls: the status writes sent.
func (s *recStatus) sentWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// use makes s cfg's Status and StatusWriter.
func (s *recStatus) use(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
	cfg.Status, cfg.Cluster.StatusWriter = s.status, s
}

func (s *recStatus) writes() []reconcile.SyncResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]reconcile.SyncResult(nil), s.calls...)
}

// recController is a Controller of ReplicaSets over the fakes above.
type recController struct {
	*reconcile.Controller[*appsv1.ReplicaSet]
	owners  *recOwners
	pods    *recPodList
	control *recPods
	patcher *recPatcher
	status  *recStatus
}

// newRecController builds a Controller over owners, pods and a recPods;
// tune, if non-nil, adjusts the Config first.
func newRecController(t testing.TB, owners *recOwners, pods []*corev1.Pod, tune func(*reconcile.Config[*appsv1.ReplicaSet])) *recController {
	t.Helper()
	r := &recController{
		owners:  owners,
		pods:    &recPodList{pods: pods},
		control: &recPods{},
		patcher: &recPatcher{},
		status:  &recStatus{},
	}
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = r.owners, r.pods, podClient{r.control, r.patcher}
	cfg.Cluster.CachesSynced = alwaysSynced
	r.status.use(&cfg)
	if tune != nil {
		tune(&cfg)
	}
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	r.Controller = c
	return r
}

// oneOwner is the Owners of a single ReplicaSet, which the test may change
// in place between calls: the cache and the live read both return it.
type oneOwner struct{ rs *appsv1.ReplicaSet }

func (o oneOwner) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	if namespace != o.rs.Namespace || name != o.rs.Name {
		return nil, apierrors.NewNotFound(rsResource, name)
	}
	return o.rs, nil
}

func (o oneOwner) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	if namespace != o.rs.Namespace {
		return nil, nil
	}
	return []*appsv1.ReplicaSet{o.rs}, nil
}

func (o oneOwner) GetLive(_ context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return o.Get(namespace, name)
}

// recOwnerMeta returns the metadata of owner name in "default", UID
// "uid-<name>".
func recOwnerMeta(name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}
}

// noStatus is a Status under which nothing ever needs writing; its
// StatusWriter fails if called.
func noStatus(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
	cfg.Status = func(*appsv1.ReplicaSet, reconcile.SyncResult) (*appsv1.ReplicaSet, bool) { return nil, false }
	cfg.Cluster.StatusWriter = statusFunc[*appsv1.ReplicaSet](func(context.Context, *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
		return nil, errors.New("test: unexpected status write")
	})
}

// podPatcher is the PatchPod half of a reconcile.PodClient.
type podPatcher interface {
	PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)
}

// podClient joins a PodControl and a patcher into the one
// reconcile.PodClient of Config.Cluster.
type podClient struct {
	reconcile.PodControl
	podPatcher
}

// withControl returns pc with its create and delete calls replaced by
// control's, keeping its patches.
func withControl(pc reconcile.PodClient, control reconcile.PodControl) reconcile.PodClient {
	return podClient{PodControl: control, podPatcher: pc}
}

// withPatcher returns pc with its patches replaced by patcher's.
func withPatcher(pc reconcile.PodClient, patcher podPatcher) reconcile.PodClient {
	return podClient{PodControl: pc, podPatcher: patcher}
}

// patchFunc adapts a function to a podPatcher.
type patchFunc func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)

func (f patchFunc) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	return f(ctx, pod, data)
}

// liveClient is a podClient that also reads pods live from a simulated
// API, as the adapters' PodControls do (reconcile.PodGetter).
type liveClient struct {
	podClient
	api *cluster.API
}

var _ reconcile.PodGetter = liveClient{}

func (c liveClient) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p, ok := c.api.Get(namespace, name)
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
	}
	return p, nil
}

// alwaysSynced is Cluster.CachesSynced for the tests' caches, which hold
// everything from the start.
func alwaysSynced() bool { return true }

// podFuncs adapts functions to a reconcile.PodClient, a reconcile.PodGetter
// and a reconcile.PodStamper, for tests whose pod client is a few lines. A
// nil Create, Delete or Patch fails its call; a nil Get answers
// errors.ErrUnsupported (no live read); a nil Stamp stamps nothing.
type podFuncs struct {
	Create func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	Delete func(ctx context.Context, pod *corev1.Pod) error
	Patch  func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)
	Get    func(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	Stamp  map[string]string
}

func (f podFuncs) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if f.Create == nil {
		return nil, errors.New("test: podFuncs.Create is nil")
	}
	return f.Create(ctx, pod)
}

func (f podFuncs) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	if f.Delete == nil {
		return errors.New("test: podFuncs.Delete is nil")
	}
	return f.Delete(ctx, pod)
}

func (f podFuncs) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	if f.Patch == nil {
		return nil, errors.New("test: podFuncs.Patch is nil")
	}
	return f.Patch(ctx, pod, data)
}

func (f podFuncs) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if f.Get == nil {
		return nil, fmt.Errorf("test: podFuncs.Get is nil: %w", errors.ErrUnsupported)
	}
	return f.Get(ctx, namespace, name)
}

func (f podFuncs) PodStamp(metav1.Object) map[string]string { return f.Stamp }

// statusFunc adapts a function to a reconcile.StatusWriter.
type statusFunc[T reconcile.Object] func(ctx context.Context, next T) (T, error)

func (f statusFunc[T]) WriteStatus(ctx context.Context, next T) (T, error) { return f(ctx, next) }
