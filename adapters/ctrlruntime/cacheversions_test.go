package ctrlruntime_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// newCache is controller-runtime's default cache, as a manager builds it,
// never started: its informers exist but list and watch nothing. A fixed
// RESTMapper keeps it off the network.
func newCache(t *testing.T, opts cache.Options) cache.Cache {
	t.Helper()
	opts.Scheme, opts.Mapper = scheme(t), mapper()
	c, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	require.NoError(t, err)
	return c
}

func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	m.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot) // for CachesSynced of a cluster-scoped kind
	return m
}

// storeOf returns the client-go store behind obj's informer in c.
func storeOf(t *testing.T, c cache.Cache, obj client.Object) toolscache.Store {
	t.Helper()
	inf, err := c.GetInformer(t.Context(), obj)
	require.NoError(t, err)
	sii, ok := inf.(toolscache.SharedIndexInformer)
	require.True(t, ok, "controller-runtime's default cache hands out %T", inf)
	return sii.GetStore()
}

// bookmark applies a watch bookmark at version to store, as a running
// informer does. Stores track no version before client-go v0.36 (they have
// no Bookmark, and CacheVersions answers ""): there, and only there, it
// skips the rest of the test, which `make compat` runs at the newest
// client-go; a store without Bookmark on v0.36 or newer fails the test.
func bookmark(t *testing.T, store toolscache.Store, version string) {
	t.Helper()
	minor, ok := storeversion.ClientGoMinor()
	require.True(t, ok, "the test binary names its k8s.io/client-go version")
	b, ok := store.(interface{ Bookmark(string) })
	if !ok {
		require.Less(t, minor, storeversion.TrackedFrom, "client-go v0.%d: a %T must track its version", minor, store)
		t.Skipf("client-go v0.%d, before v0.%d: a %T tracks no version (the rest runs in make compat)", minor, storeversion.TrackedFrom, store)
	}
	b.Bookmark(version)
}

// The default cache hands out client-go SharedIndexInformers: CacheVersions
// reads their stores, the cache versions the consistency gate compares the
// controller's writes with; "" until a store holds a version.
func TestCacheVersionsFromTheDefaultCache(t *testing.T) {
	c := newCache(t, cache.Options{})
	cv, err := ctrlruntime.CacheVersions[*appsv1.ReplicaSet](c)
	require.NoError(t, err)
	require.NotNil(t, cv.Pods)
	require.NotNil(t, cv.Owners)
	assert.Empty(t, cv.Pods())
	assert.Empty(t, cv.Owners())
	synced, err := ctrlruntime.CachesSynced[*appsv1.ReplicaSet](c)
	require.NoError(t, err)
	assert.False(t, synced(), "R-14.8: a cache not started has not synced")

	// What a watch bookmark does to a running informer's store.
	bookmark(t, storeOf(t, c, &corev1.Pod{}), "41")
	bookmark(t, storeOf(t, c, &appsv1.ReplicaSet{}), "7")
	assert.Equal(t, "41", cv.Pods())
	assert.Equal(t, "7", cv.Owners())
}

// A cache restricted to namespaces wraps one informer per namespace and
// exposes no store; the fake informers have none: CacheVersions says so.
func TestCacheVersionsNeedsClientGoInformers(t *testing.T) {
	for name, c := range map[string]cache.Informers{
		"namespaces": newCache(t, cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}, "b": {}}}),
		"pods in one namespace": newCache(t, cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Namespaces: map[string]cache.Config{"a": {}}},
		}}),
		"informertest": &informertest.FakeInformers{Scheme: scheme(t)},
	} {
		_, err := ctrlruntime.CacheVersions[*appsv1.ReplicaSet](c)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ctrlruntime: CacheVersions: the informer of *v1.Pod", name)
	}
	_, err := ctrlruntime.CacheVersions[*appsv1.ReplicaSet](newCache(t, cache.Options{
		ByObject: map[client.Object]cache.ByObject{&appsv1.ReplicaSet{}: {Namespaces: map[string]cache.Config{"a": {}}}},
	}))
	assert.ErrorContains(t, err, "the informer of *v1.ReplicaSet is a", "the owners' informer")
	_, err = ctrlruntime.CacheVersions[*appsv1.ReplicaSet](nil)
	assert.ErrorContains(t, err, "ctrlruntime: CacheVersions: nil informers")
	_, err = ctrlruntime.CacheVersions[*corev1.ConfigMap](newCache(t, cache.Options{}))
	assert.ErrorContains(t, err, "ctrlruntime: CacheVersions: the informer of *v1.ConfigMap", "a kind the RESTMapper does not know")
}

// NewConfig names the owners' resource from the client's RESTMapper, or by
// apimachinery's pluralization when the mapper does not know the kind.
func TestNewConfigResource(t *testing.T) {
	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build() // an empty RESTMapper
	guessed, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	require.NoError(t, err)
	assert.Equal(t, schema.GroupResource{Group: "apps", Resource: "replicasets"}, guessed.Cluster.Resource)

	m := meta.NewDefaultRESTMapper(nil)
	m.AddSpecific(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), appsv1.SchemeGroupVersion.WithResource("rsets"),
		appsv1.SchemeGroupVersion.WithResource("rset"), meta.RESTScopeNamespace)
	c = fake.NewClientBuilder().WithScheme(s).WithRESTMapper(m).Build()
	mapped, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	require.NoError(t, err)
	assert.Equal(t, schema.GroupResource{Group: "apps", Resource: "rsets"}, mapped.Cluster.Resource, "the mapper's answer wins")
}

// the gate is on by default, as in the client-go adapter: given
// the manager's cache, NewConfig wires its versions itself (the old
// NewConfig left the gate off unless the caller also called
// CacheVersions). A cache restricted to namespaces is reported once, by
// NewConfig, with how to run without the gate; nil informers do that, and
// the Config says so.
func TestNewConfigTurnsTheGateOn(t *testing.T) {
	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	informers := newCache(t, cache.Options{})
	cfg, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, informers, s, nil, ctrlruntime.ConfigOptions{})
	require.NoError(t, err)
	require.NotNil(t, cfg.Cluster.CacheVersions.Pods, "the gate and Exact have the pods' version")
	require.NotNil(t, cfg.Cluster.CacheVersions.Owners)
	assert.False(t, cfg.DisableConsistencyGate)
	require.NotNil(t, cfg.Cluster.CachesSynced, "R-14.8: the unsynced-cache guard")
	assert.IsType(t, ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{}, cfg.Cluster.StatusWriter)

	namespaced := newCache(t, cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}, "b": {}}})
	_, err = ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, namespaced, s, nil, ctrlruntime.ConfigOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ctrlruntime: NewConfig: the consistency gate")
	assert.Contains(t, err.Error(), "set ConfigOptions.NoCacheVersions to run without it")

	off, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, namespaced, s, nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	require.NoError(t, err)
	assert.True(t, off.DisableConsistencyGate, "NoCacheVersions: the gate is off, and the Config says so")
	assert.Nil(t, off.Cluster.CacheVersions.Pods)
	require.NotNil(t, off.Cluster.CachesSynced, "R-14.8: the guard stays, on a cache restricted to namespaces too")
	assert.False(t, off.Cluster.CachesSynced(), "a cache not started has not synced")

	bookmark(t, storeOf(t, informers, &corev1.Pod{}), "41") // last: it skips before client-go v0.36
	assert.Equal(t, "41", cfg.Cluster.CacheVersions.Pods())
}

// heldListWatch lists list once release is closed, and then watches a
// watcher that sends nothing: its informer syncs when the test says so.
type heldListWatch struct {
	release <-chan struct{}
	list    runtime.Object
}

func (lw heldListWatch) List(metav1.ListOptions) (runtime.Object, error) {
	<-lw.release
	return lw.list.DeepCopyObject(), nil
}

func (lw heldListWatch) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// IsWatchListSemanticsUnSupported makes a reflector list, then watch.
func (heldListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// heldInformers is a cache.Informers whose GetInformer hands out client-go
// informers over heldListWatch, by object type; its other methods are not
// implemented.
type heldInformers struct {
	cache.Informers
	byType map[reflect.Type]toolscache.SharedIndexInformer
}

func (h heldInformers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	inf, ok := h.byType[reflect.TypeOf(obj)]
	if !ok {
		return nil, fmt.Errorf("no informer for %T", obj)
	}
	return inf, nil
}

// CachesSynced answers true only once both informers have synced. Until
// then the Controller NewConfig builds refuses: the Reconciler (with a
// Backoff, as Register's) requeues with backoff, without an error (so no
// "Reconciler error" line), logs the deferral at V(2) only, and creates
// nothing, though the client it lists
// pods from (a pod cache that has not loaded) shows none of the
// ReplicaSet's 3 pods.
func TestCacheVersionsSynced(t *testing.T) {
	podsListed, ownersListed := make(chan struct{}), make(chan struct{})
	podInf := toolscache.NewSharedIndexInformer(heldListWatch{podsListed, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}}, &corev1.Pod{}, 0, toolscache.Indexers{})
	rsInf := toolscache.NewSharedIndexInformer(heldListWatch{ownersListed, &appsv1.ReplicaSetList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}}, &appsv1.ReplicaSet{}, 0, toolscache.Indexers{})
	informers := heldInformers{byType: map[reflect.Type]toolscache.SharedIndexInformer{
		reflect.TypeFor[*corev1.Pod](): podInf, reflect.TypeFor[*appsv1.ReplicaSet](): rsInf,
	}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { podInf.Run(ctx.Done()) })
	wg.Go(func() { rsInf.Run(ctx.Done()) })

	s := scheme(t)
	three := int32(3)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "uid-web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(rs).WithStatusSubresource(rs).Build()
	cfg, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, informers, s, nil, ctrlruntime.ConfigOptions{})
	require.NoError(t, err)
	require.NotNil(t, cfg.Cluster.CachesSynced)
	synced := cfg.Cluster.CachesSynced
	cfg.Describe, cfg.Status = reconcile.ReplicaSets().Describe, reconcile.ReplicaSets().Status
	ctrl, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	backoff := workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]()
	var lines []string
	logger := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 2})
	reconcileOnce := func() (crreconcile.Result, error) {
		return ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: ctrl, Backoff: backoff}.Reconcile(log.IntoContext(t.Context(), logger),
			crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(rs)})
	}
	podCount := func() int {
		var pods corev1.PodList
		require.NoError(t, c.List(t.Context(), &pods))
		return len(pods.Items)
	}

	assert.False(t, synced(), "neither informer has listed")
	close(ownersListed)
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), rsInf.HasSynced))
	assert.False(t, synced(), "the owners have synced, the pods have not")

	res, err := reconcileOnce()
	require.NoError(t, err, "a deferral is not a reconciler error")
	assert.Positive(t, res.RequeueAfter, "retried with backoff")
	assert.Zero(t, podCount(), "nothing created before the pod cache has loaded")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"msg"="Sync deferred: the informer caches have not synced yet`)
	assert.Contains(t, lines[0], `"level"=2`, "below the default level")

	close(podsListed)
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), podInf.HasSynced))
	assert.True(t, synced())
	_, err = reconcileOnce()
	require.NoError(t, err)
	assert.Equal(t, 3, podCount(), "synced: the sync acts")
}
