package sharding_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const ns = "default"

// half is the shard the tests hold: buckets [0, 128) of two shards.
var half = sharding.Shard{Index: 0, Count: 2}

var replicaSets = schema.GroupResource{Group: "apps", Resource: "replicasets"}

// uidsIn returns n distinct UIDs, starting with prefix, of owners that
// belong to s (in == true) or do not (in == false).
func uidsIn(s sharding.Shard, in bool, prefix string, n int) []types.UID {
	var out []types.UID
	for i := 0; len(out) < n; i++ {
		uid := types.UID(fmt.Sprintf("%s-%d", prefix, i))
		if s.Contains(uid) == in {
			out = append(out, uid)
		}
	}
	return out
}

func replicaSet(name string, uid types.UID, controller types.UID) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
	if controller != "" {
		rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: controller, Controller: ptrTo(true)}}
	}
	return rs
}

// podOf returns a pod in namespace controlled by the ReplicaSet with
// uid ("" for an orphan), with labels.
func podOf(namespace, name string, uid types.UID, labels map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: name, UID: types.UID("pod-" + namespace + "-" + name), Labels: labels,
	}}
	if uid != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + string(uid), UID: uid, Controller: ptrTo(true)}}
	}
	return p
}

func ptrTo[T any](v T) *T { return &v }

// fakeOwners is an Owners over a slice, as an informer cache would hold
// it, except that it may hold nil pointers (which a cache never does) to
// check that the wrapper does not dereference them. Get of the name "nil"
// answers a nil pointer and no error. It does not model namespaces of
// cluster-scoped owners nor GetLive's consistent read.
type fakeOwners struct {
	items []*appsv1.ReplicaSet
}

func (f *fakeOwners) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	if name == "nil" {
		return nil, nil
	}
	for _, rs := range f.items {
		if rs != nil && rs.Namespace == namespace && rs.Name == name {
			return rs, nil
		}
	}
	return nil, apierrors.NewNotFound(replicaSets, name)
}

func (f *fakeOwners) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	var out []*appsv1.ReplicaSet
	for _, rs := range f.items {
		if rs == nil || rs.Namespace == namespace {
			out = append(out, rs)
		}
	}
	return out, nil
}

func (f *fakeOwners) GetLive(_ context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return f.Get(namespace, name)
}

// fakeOwnersByController adds the lookup by controller UID (nil pointers
// are answered for every UID).
type fakeOwnersByController struct{ *fakeOwners }

func (f fakeOwnersByController) ListByController(namespace string, uid types.UID) ([]*appsv1.ReplicaSet, error) {
	var out []*appsv1.ReplicaSet
	for _, rs := range f.items {
		if rs == nil {
			out = append(out, rs)
			continue
		}
		if ref := metav1.GetControllerOf(rs); rs.Namespace == namespace && ref != nil && ref.UID == uid {
			out = append(out, rs)
		}
	}
	return out, nil
}

// fakePods is a pod cache over a slice; it returns its own pointers.
type fakePods struct{ items []*corev1.Pod }

func (f *fakePods) List(namespace string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, p := range f.items {
		if namespace == "" || p.Namespace == namespace {
			out = append(out, p)
		}
	}
	return out, nil
}

// fakePodsByController adds the lookup by controller: the pods of uid and
// the orphans (kind and name are not compared).
type fakePodsByController struct{ *fakePods }

func (f fakePodsByController) ListByController(namespace, _, _ string, uid types.UID) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, p := range f.items {
		ref := metav1.GetControllerOf(p)
		if p.Namespace == namespace && (ref == nil || ref.UID == uid) {
			out = append(out, p)
		}
	}
	return out, nil
}

type patchCall struct {
	pod  string // namespace/name
	data []byte
}

// fakePodClient records the pods it is given and answers each write with
// a copy carrying the next resourceVersion (from 101); a patch's
// metadata.labels are merged into the copy, nothing else of the patch is
// applied. errFor injects an error by pod name (the write is then not
// recorded), onPatch runs before each patch. It stores nothing: a Get
// after a create does not find the pod.
type fakePodClient struct {
	mu      sync.Mutex
	rv      int
	created []*corev1.Pod
	deleted []string
	patches []patchCall
	errFor  map[string]error
	onPatch func()
}

func (f *fakePodClient) next(pod *corev1.Pod) *corev1.Pod {
	f.rv++
	out := pod.DeepCopy()
	out.ResourceVersion = fmt.Sprint(100 + f.rv)
	return out
}

func (f *fakePodClient) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errFor[pod.Name]; err != nil {
		return nil, err
	}
	f.created = append(f.created, pod.DeepCopy())
	return f.next(pod), nil
}

func (f *fakePodClient) DeletePod(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, pod.Namespace+"/"+pod.Name)
	return f.errFor[pod.Name]
}

func (f *fakePodClient) PatchPod(_ context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	if f.onPatch != nil {
		f.onPatch()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.patches = append(f.patches, patchCall{pod: pod.Namespace + "/" + pod.Name, data: data})
	if err := f.errFor[pod.Name]; err != nil {
		return nil, err
	}
	var patch struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	out := f.next(pod)
	if len(patch.Metadata.Labels) > 0 {
		out.Labels = maps.Clone(out.Labels)
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		maps.Copy(out.Labels, patch.Metadata.Labels)
	}
	return out, nil
}

func (f *fakePodClient) patched() []patchCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]patchCall(nil), f.patches...)
}

// fakePodGetter is a fakePodClient that reads pods too: it answers every
// GetPod with a pod of that name.
type fakePodGetter struct{ *fakePodClient }

func (fakePodGetter) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, nil
}

// fakeStamper is a fakePodClient that declares a stamp (it does not put it
// on the pods it creates).
type fakeStamper struct{ *fakePodClient }

func (fakeStamper) PodStamp(metav1.Object) map[string]string {
	return map[string]string{"example.com/managed-by": "x"}
}

// fakeStatus answers each status write with a copy at resourceVersion rv,
// or err.
type fakeStatus struct {
	rv  string
	err error
}

func (f fakeStatus) WriteStatus(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := next.DeepCopy()
	out.ResourceVersion = f.rv
	return out, nil
}

// version is a CacheVersions func the test moves.
type version struct{ v atomic.Value }

func newVersion(v string) *version {
	out := &version{}
	out.v.Store(v)
	return out
}

func (v *version) get() string  { return v.v.Load().(string) }
func (v *version) set(s string) { v.v.Store(s) }

// newHeld returns a Held of half with resume, its fence open for a minute
// of a fake clock.
func newHeld(resume string) (*sharding.Held, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	return sharding.NewHeldForTest(half, resume, clk, time.Minute), clk
}

// unstampedOf returns the Unstamped of an informer over client's pods, not
// started.
func unstampedOf(t *testing.T, client kubernetes.Interface) (*sharding.Unstamped, informers.SharedInformerFactory) {
	t.Helper()
	f := informers.NewSharedInformerFactory(client, 0)
	u, err := sharding.NewUnstamped(f.Core().V1().Pods().Informer())
	require.NoError(t, err)
	return u, f
}

// start starts f and waits for its pod informer's first list; the test's
// end stops it.
func start(t *testing.T, f informers.SharedInformerFactory) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	f.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), f.Core().V1().Pods().Informer().HasSynced))
}

// startedUnstamped returns the Unstamped of pods, listed.
func startedUnstamped(t *testing.T, pods ...*corev1.Pod) (*sharding.Unstamped, *fake.Clientset, cache.SharedIndexInformer) {
	t.Helper()
	objs := make([]runtime.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	cs := fake.NewClientset(objs...)
	u, f := unstampedOf(t, cs)
	start(t, f)
	return u, cs, f.Core().V1().Pods().Informer()
}

func synced() bool { return true }

// Owners answer for the shard's owners only, with and without the lookup
// by controller, which the wrapper keeps exactly when the inner has it.
// A nil pointer from the inner cache is passed on or left out, never
// dereferenced.
func TestWrapClusterOwners(t *testing.T) {
	inUIDs, outUIDs := uidsIn(half, true, "rs", 2), uidsIn(half, false, "rs", 2)
	deploy := types.UID("deploy")
	mine, mine2 := replicaSet("mine", inUIDs[0], deploy), replicaSet("mine2", inUIDs[1], "")
	theirs, theirs2 := replicaSet("theirs", outUIDs[0], deploy), replicaSet("theirs2", outUIDs[1], "")
	inner := &fakeOwners{items: []*appsv1.ReplicaSet{mine, theirs, nil, mine2, theirs2}}
	for _, tc := range []struct {
		name   string
		owners reconcile.Owners[*appsv1.ReplicaSet]
		by     bool
	}{
		{name: "Owners", owners: inner},
		{name: "OwnersByController", owners: fakeOwnersByController{inner}, by: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHeld("")
			c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{Owners: tc.owners, Resource: replicaSets}, nil)

			got, err := c.Owners.Get(ns, "mine")
			require.NoError(t, err)
			assert.Same(t, mine, got, "an owner of the shard passes through")

			got, err = c.Owners.Get(ns, "theirs")
			require.Error(t, err)
			assert.True(t, apierrors.IsNotFound(err), "another shard's owner is NotFound: %v", err)
			assert.Nil(t, got)
			var status apierrors.APIStatus
			require.True(t, errors.As(err, &status))
			assert.Equal(t, replicaSets.Group, status.Status().Details.Group)
			assert.Equal(t, replicaSets.Resource, status.Status().Details.Kind)

			_, err = c.Owners.Get(ns, "missing")
			assert.True(t, apierrors.IsNotFound(err), "the inner's NotFound passes through: %v", err)

			require.NotPanics(t, func() {
				got, err = c.Owners.Get(ns, "nil")
			})
			assert.NoError(t, err)
			assert.Nil(t, got, "a nil owner is passed on as the inner answered it")

			var list []*appsv1.ReplicaSet
			require.NotPanics(t, func() { list, err = c.Owners.List(ns) })
			require.NoError(t, err)
			assert.Equal(t, []*appsv1.ReplicaSet{mine, mine2}, list, "the shard's owners, nil pointers left out")

			by, ok := c.Owners.(reconcile.OwnersByController[*appsv1.ReplicaSet])
			require.Equal(t, tc.by, ok, "OwnersByController kept exactly when the inner has it")
			if !ok {
				return
			}
			require.NotPanics(t, func() { list, err = by.ListByController(ns, deploy) })
			require.NoError(t, err)
			assert.Equal(t, []*appsv1.ReplicaSet{mine}, list, "the shard's owners controlled by uid")
		})
	}
}

// CreatePod stamps the bucket of the pod's controller on a copy, refuses
// a pod it cannot stamp before any call, and records the created pod's
// resourceVersion for the hand-over.
func TestWrapClusterCreatePod(t *testing.T) {
	owner := uidsIn(half, true, "owner", 1)[0]
	bucket := sharding.BucketValue(owner)
	otherBucket := "ff"
	if bucket == otherBucket {
		otherBucket = "00"
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		wantErr string
	}{
		{name: "no labels", pod: podOf(ns, "a", owner, nil)},
		{name: "template labels", pod: podOf(ns, "a", owner, map[string]string{"app": "web"})},
		{name: "template sets the same bucket", pod: podOf(ns, "a", owner, map[string]string{sharding.BucketLabel: bucket})},
		{name: "no controller reference", pod: podOf(ns, "a", "", nil), wantErr: "sharding: a pod to create has no controller reference"},
		{name: "template sets another bucket", pod: podOf(ns, "a", owner, map[string]string{sharding.BucketLabel: otherBucket}), wantErr: "sharding: the pod template sets label " + sharding.BucketLabel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHeld("50")
			inner := &fakePodClient{}
			c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{PodClient: inner}, nil)
			before := tc.pod.DeepCopy()
			labelsBefore := tc.pod.Labels

			created, err := c.PodClient.CreatePod(t.Context(), tc.pod)
			assert.Equal(t, before, tc.pod, "the caller's pod is not modified")
			if labelsBefore != nil {
				assert.Equal(t, before.Labels, labelsBefore, "nor its labels map")
			}
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.Nil(t, created)
				assert.Empty(t, inner.created, "refused before any call")
				assert.Equal(t, "50", h.WrittenForTest(), "nothing recorded")
				return
			}
			require.NoError(t, err)
			require.Len(t, inner.created, 1)
			want := maps.Clone(before.Labels)
			if want == nil {
				want = map[string]string{}
			}
			want[sharding.BucketLabel] = bucket
			assert.Equal(t, want, inner.created[0].Labels, "the inner client is given the stamped pod")
			assert.Equal(t, want, created.Labels)
			assert.Equal(t, "101", h.WrittenForTest(), "the created pod's resourceVersion is recorded")
		})
	}
}

// A failed create or patch records nothing; an older version than one
// recorded does not replace it.
func TestWrapClusterRecordsOnlySuccessfulWrites(t *testing.T) {
	owner := uidsIn(half, true, "owner", 1)[0]
	h, _ := newHeld("")
	inner := &fakePodClient{errFor: map[string]error{"bad": apierrors.NewInternalError(errors.New("boom"))}}
	c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{PodClient: inner}, nil)
	_, err := c.PodClient.CreatePod(t.Context(), podOf(ns, "bad", owner, nil))
	require.Error(t, err)
	_, err = c.PodClient.PatchPod(t.Context(), podOf(ns, "bad", owner, nil), []byte(`{}`))
	require.Error(t, err)
	assert.Empty(t, h.WrittenForTest())

	h.Wrote("500")
	_, err = c.PodClient.CreatePod(t.Context(), podOf(ns, "ok", owner, nil))
	require.NoError(t, err)
	assert.Equal(t, "500", h.WrittenForTest(), "101 is older than 500")
}

// PatchPod and StatusWriter record the versions they answer; DeletePod is
// passed through.
func TestWrapClusterPatchAndStatusRecord(t *testing.T) {
	owner := uidsIn(half, true, "owner", 1)[0]
	h, _ := newHeld("")
	inner := &fakePodClient{}
	c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{PodClient: inner, StatusWriter: fakeStatus{rv: "700"}}, nil)

	pod := podOf(ns, "a", owner, nil)
	patched, err := c.PodClient.PatchPod(t.Context(), pod, []byte(`{"metadata":{"labels":{"x":"y"}}}`))
	require.NoError(t, err)
	assert.Equal(t, "101", patched.ResourceVersion)
	assert.Equal(t, "101", h.WrittenForTest())
	assert.Len(t, inner.patched(), 1)

	require.NoError(t, c.PodClient.DeletePod(t.Context(), pod))
	assert.Equal(t, []string{ns + "/a"}, inner.deleted)

	written, err := c.StatusWriter.WriteStatus(t.Context(), replicaSet("rs", owner, ""))
	require.NoError(t, err)
	assert.Equal(t, "700", written.ResourceVersion)
	assert.Equal(t, "700", h.WrittenForTest())

	failing := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{StatusWriter: fakeStatus{err: apierrors.NewConflict(replicaSets, "rs", errors.New("x"))}}, nil)
	_, err = failing.StatusWriter.WriteStatus(t.Context(), replicaSet("rs", owner, ""))
	assert.True(t, apierrors.IsConflict(err))
	assert.Equal(t, "700", h.WrittenForTest())
}

// The wrapped pod client keeps reconcile.PodGetter exactly when the inner
// is one, and is always a reconcile.PodStamper answering the inner's stamp.
func TestWrapClusterPodClientInterfaces(t *testing.T) {
	for _, tc := range []struct {
		name      string
		inner     reconcile.PodClient
		getter    bool
		wantStamp map[string]string
	}{
		{name: "plain", inner: &fakePodClient{}},
		{name: "PodGetter", inner: fakePodGetter{&fakePodClient{}}, getter: true},
		{name: "PodStamper", inner: fakeStamper{&fakePodClient{}}, wantStamp: map[string]string{"example.com/managed-by": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHeld("")
			c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{PodClient: tc.inner}, nil)
			g, ok := c.PodClient.(reconcile.PodGetter)
			require.Equal(t, tc.getter, ok)
			if ok {
				got, err := g.GetPod(t.Context(), ns, "p")
				require.NoError(t, err)
				assert.Equal(t, "p", got.Name)
			}
			s, ok := c.PodClient.(reconcile.PodStamper)
			require.True(t, ok)
			assert.Equal(t, tc.wantStamp, s.PodStamp(nil), "no owner: the inner client's stamp")
			owner := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "rs-uid"}}
			want := map[string]string{sharding.BucketLabel: sharding.BucketValue("rs-uid")}
			maps.Copy(want, tc.wantStamp)
			assert.Equal(t, want, s.PodStamp(owner), "an owner's stamp: the inner client's and its bucket")
		})
	}
}

// WrapCluster leaves nil fields nil and copies those it does not wrap.
func TestWrapClusterLeavesTheRest(t *testing.T) {
	h, _ := newHeld("")
	c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{Resource: replicaSets, CachesSynced: synced}, nil)
	assert.Nil(t, c.Owners)
	assert.Nil(t, c.Pods)
	assert.Nil(t, c.PodClient)
	assert.Nil(t, c.StatusWriter)
	assert.Equal(t, replicaSets, c.Resource)
	assert.True(t, c.CachesSynced())
}

// CachesSynced waits for the inner caches, for unstamped's first list and
// for the hand-over: both cache versions at or past Held.Resume. Once
// caught up it stays true; "" versions (no version tracked) and missing
// funcs are trusted.
func TestWrapClusterCachesSynced(t *testing.T) {
	t.Run("inner not synced", func(t *testing.T) {
		h, _ := newHeld("")
		var inner atomic.Bool
		c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{CachesSynced: inner.Load}, nil)
		assert.False(t, c.CachesSynced())
		inner.Store(true)
		assert.True(t, c.CachesSynced())
	})
	t.Run("no inner CachesSynced", func(t *testing.T) {
		h, _ := newHeld("")
		c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{}, nil)
		assert.False(t, c.CachesSynced(), "a Cluster without CachesSynced is never synced")
	})
	t.Run("unstamped not listed", func(t *testing.T) {
		h, _ := newHeld("")
		u, f := unstampedOf(t, fake.NewClientset())
		c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{CachesSynced: synced}, u)
		assert.False(t, c.CachesSynced())
		start(t, f)
		assert.True(t, c.CachesSynced())
	})
	t.Run("hand-over", func(t *testing.T) {
		for _, tc := range []struct {
			name         string
			resume       string
			pods, owners string
			want         bool
		}{
			{name: "first holder", resume: "", pods: "1", owners: "1", want: true},
			{name: "both behind", resume: "100", pods: "99", owners: "99"},
			{name: "pods behind", resume: "100", pods: "99", owners: "100"},
			{name: "owners behind", resume: "100", pods: "100", owners: "99"},
			{name: "both reached", resume: "100", pods: "100", owners: "100", want: true},
			{name: "both past", resume: "100", pods: "1000", owners: "101", want: true},
			{name: "no versions tracked", resume: "100", pods: "", owners: "", want: true},
			{name: "pods untracked, owners behind", resume: "100", pods: "", owners: "99"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h, _ := newHeld(tc.resume)
				c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{
					CachesSynced:  synced,
					CacheVersions: reconcile.CacheVersions{Pods: newVersion(tc.pods).get, Owners: newVersion(tc.owners).get},
				}, nil)
				assert.Equal(t, tc.want, c.CachesSynced())
			})
		}
	})
	t.Run("no version funcs", func(t *testing.T) {
		h, _ := newHeld("100")
		c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{CachesSynced: synced}, nil)
		assert.True(t, c.CachesSynced())
	})
	t.Run("stays true once caught up", func(t *testing.T) {
		h, _ := newHeld("100")
		pods, owners := newVersion("50"), newVersion("50")
		c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{
			CachesSynced:  synced,
			CacheVersions: reconcile.CacheVersions{Pods: pods.get, Owners: owners.get},
		}, nil)
		assert.False(t, c.CachesSynced())
		pods.set("120")
		assert.False(t, c.CachesSynced())
		owners.set("100")
		assert.True(t, c.CachesSynced())
		// A relist from another API server may report an older version;
		// the hand-over was reached once, the gate does not close again.
		pods.set("60")
		owners.set("60")
		assert.True(t, c.CachesSynced())
	})
}

// Pods adds the unstamped pods of the shard's owners to the cache's, each
// pod once: not another shard's, not an orphan, not one already stamped,
// not one the cache lists already.
func TestWrapClusterPodsAddUnstamped(t *testing.T) {
	in, out := uidsIn(half, true, "owner", 2), uidsIn(half, false, "owner", 1)
	stamped := podOf(ns, "stamped", in[0], map[string]string{sharding.BucketLabel: sharding.BucketValue(in[0])})
	old := podOf(ns, "old", in[0], nil)
	oldOther := podOf(ns, "old-other", in[1], nil)
	oldElsewhere := podOf("elsewhere", "old", in[0], nil)
	theirs := podOf(ns, "theirs", out[0], nil)
	orphan := podOf(ns, "orphan", "", nil)
	labeled := podOf(ns, "labeled", in[0], map[string]string{sharding.BucketLabel: sharding.BucketValue(in[0])})
	// both: in the unstamped informer (not yet updated) and already in the
	// shard's pod cache with the label.
	both := podOf(ns, "both", in[0], nil)
	bothStamped := both.DeepCopy()
	bothStamped.Labels = map[string]string{sharding.BucketLabel: sharding.BucketValue(in[0])}

	u, _, _ := startedUnstamped(t, old, oldOther, oldElsewhere, theirs, orphan, labeled, both)
	cached := &fakePods{items: []*corev1.Pod{stamped, bothStamped}}
	for _, tc := range []struct {
		name string
		pods reconcile.Pods
		by   bool
	}{
		{name: "Pods", pods: cached},
		{name: "PodsByController", pods: fakePodsByController{cached}, by: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHeld("")
			c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{Pods: tc.pods, CachesSynced: synced}, u)

			list, err := c.Pods.List(ns)
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"stamped", "both", "old", "old-other"}, names(list))
			assert.Same(t, bothStamped, byName(list, "both"), "the cache's copy is kept")

			list, err = c.Pods.List("")
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"default/stamped", "default/both", "default/old", "default/old-other", "elsewhere/old"}, keys(list))

			by, ok := c.Pods.(reconcile.PodsByController)
			require.Equal(t, tc.by, ok, "PodsByController kept exactly when the inner has it")
			if !ok {
				return
			}
			list, err = by.ListByController(ns, "ReplicaSet", "rs", in[0])
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"stamped", "both", "old"}, names(list), "the owner's unstamped pods, each once")
			list, err = by.ListByController(ns, "ReplicaSet", "rs", in[1])
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"old-other"}, names(list))
		})
	}
}

// The pods Unstamped.Stamp patched are listed until the pod cache's
// version passes their patch, also once they left the unstamped informer
// and before the pod cache shows them; a cache that tracks no version
// keeps listing them, once each.
func TestWrapClusterPodsListStampedUntilTheCacheHasThem(t *testing.T) {
	owners := uidsIn(half, true, "owner", 2)
	a, b := podOf(ns, "a", owners[0], nil), podOf(ns, "b", owners[1], nil)
	u, cs, inf := startedUnstamped(t, a, b)
	h, _ := newHeld("")
	client := &fakePodClient{}
	n, err := u.Stamp(t.Context(), h, client)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	rvs := map[string]string{} // by pod name: 101 and 102 in the order patched
	for i, p := range client.patched() {
		rvs[p.pod[len(ns)+1:]] = fmt.Sprint(101 + i)
	}
	// The stamped pods leave the unstamped informer (its selector wants
	// the label absent) before the shard's pod cache shows them.
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(t.Context(), "a", metav1.DeleteOptions{}))
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(t.Context(), "b", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(inf.GetStore().List()) == 0 }, 5*time.Second, 10*time.Millisecond)

	cached := &fakePods{}
	podsRV := newVersion("100")
	c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{
		Pods: fakePodsByController{cached}, CachesSynced: synced,
		CacheVersions: reconcile.CacheVersions{Pods: podsRV.get},
	}, u)
	by := c.Pods.(reconcile.PodsByController)

	list, err := c.Pods.List(ns)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, names(list), "in flight: listed")
	for _, p := range list {
		assert.Equal(t, sharding.BucketValue(metav1.GetControllerOf(p).UID), p.Labels[sharding.BucketLabel], "the patched copy")
	}
	list, err = c.Pods.List("elsewhere")
	require.NoError(t, err)
	assert.Empty(t, list, "another namespace")
	list, err = by.ListByController(ns, "ReplicaSet", "rs", owners[1])
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, names(list))

	// The cache reaches the first patch: that pod is the cache's to list.
	second := "b"
	if rvs["a"] != "101" {
		second = "a"
	}
	podsRV.set("101")
	list, err = c.Pods.List(ns)
	require.NoError(t, err)
	assert.Equal(t, []string{second}, names(list))
	podsRV.set("102")
	list, err = c.Pods.List(ns)
	require.NoError(t, err)
	assert.Empty(t, list, "the cache has passed both patches")

	t.Run("no cache version", func(t *testing.T) {
		a, b := podOf(ns, "a", owners[0], nil), podOf(ns, "b", owners[1], nil)
		u, cs, inf := startedUnstamped(t, a, b)
		h, _ := newHeld("")
		client := &fakePodClient{}
		n, err := u.Stamp(t.Context(), h, client)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		aStamped := a.DeepCopy()
		aStamped.Labels = map[string]string{sharding.BucketLabel: sharding.BucketValue(owners[0])}
		cached := &fakePods{items: []*corev1.Pod{aStamped}}
		c := sharding.WrapCluster(h, reconcile.Cluster[*appsv1.ReplicaSet]{Pods: cached, CachesSynced: synced}, u)
		for range 2 {
			list, err := c.Pods.List(ns)
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"a", "b"}, names(list), "kept, each once")
			assert.Same(t, aStamped, byName(list, "a"))
		}

		// The cache shows a at its patched version: a is forgotten, so
		// once deleted it is listed no more (before, it stayed listed
		// until the shard changed hands: one pod too few for its owner).
		for i, p := range client.patched() {
			if p.pod == ns+"/a" {
				aStamped.ResourceVersion = fmt.Sprint(101 + i)
			}
		}
		list, err := c.Pods.List(ns)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"a", "b"}, names(list))
		require.NoError(t, cs.CoreV1().Pods(ns).Delete(t.Context(), "a", metav1.DeleteOptions{}))
		require.Eventually(t, func() bool { return len(inf.GetStore().List()) == 1 }, 5*time.Second, 10*time.Millisecond)
		cached.items = nil
		list, err = c.Pods.List(ns)
		require.NoError(t, err)
		assert.Equal(t, []string{"b"}, names(list), "a deleted after the cache showed it is gone")
	})
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func keys(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func byName(pods []*corev1.Pod, name string) *corev1.Pod {
	for _, p := range pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}
