package ctrlruntime_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/config"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// newManager is a manager that is never started: a fixed RESTMapper keeps
// it (and the informers field indexes create) off the network. Controller
// names are unique per process unless validation is skipped: skipped, so
// that the tests run again with -count.
func newManager(t *testing.T) ctrl.Manager {
	t.Helper()
	skip := true
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Controller:     config.Controller{SkipNameValidation: &skip},
		Scheme:         scheme(t),
		Metrics:        metricsserver.Options{BindAddress: "0"},
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper(), nil },
	})
	require.NoError(t, err)
	return mgr
}

func managerController(t *testing.T, mgr ctrl.Manager) *reconcile.Controller[*appsv1.ReplicaSet] {
	t.Helper()
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	require.NoError(t, err)
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.Status = reconcile.ReplicaSets().Status
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	return c
}

// Register builds a controller in a manager (not started: nothing is
// contacted) from the manager's client, API reader and scheme, adds the
// field indexes the lookups read, keeping them when a second
// controller registers, and returns the controller, which takes more
// watches.
func TestRegisterBuildsAController(t *testing.T) {
	mgr := newManager(t)
	c := managerController(t, mgr)
	ctl, err := ctrlruntime.Register(mgr, "replicaset", c, ctrlruntime.Options{})
	require.NoError(t, err)
	require.NotNil(t, ctl)
	assert.NoError(t, ctl.Watch(source.Kind(mgr.GetCache(), &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{})))
	_, err = ctrlruntime.Register(mgr, "replicaset-2", c, ctrlruntime.Options{Workers: 2})
	assert.NoError(t, err)
	inf, err := mgr.GetCache().GetInformer(t.Context(), &corev1.Pod{})
	require.NoError(t, err)
	assert.Contains(t, inf.(toolscache.SharedIndexInformer).GetIndexer().GetIndexers(), "field:"+ctrlruntime.PodControllerField)

	_, err = ctrlruntime.Register[*appsv1.ReplicaSet](mgr, "x", nil, ctrlruntime.Options{})
	assert.Error(t, err)
	bad := ctrlruntime.Options{Controller: crcontroller.Options{Reconciler: crreconcile.Func(func(context.Context, crreconcile.Request) (crreconcile.Result, error) {
		return crreconcile.Result{}, nil
	})}}
	_, err = ctrlruntime.Register(mgr, "y", c, bad)
	assert.ErrorContains(t, err, "Reconciler must be nil")
}

// NewConfig reads owners through the manager's client (its cache, not
// started here: ErrCacheNotStarted) and re-reads them live through its API
// reader (R-9.5: here an API server that does not answer), never the
// cached client; its pod client stamps OwnedPods' labels and reads pods
// live through the API reader too; it adds its event recorder to the
// manager.
func TestNewConfigFromTheManager(t *testing.T) {
	mgr := newManager(t)
	owned, err := ctrlruntime.NewOwnedPods(map[string]string{"a": "b"}, false)
	require.NoError(t, err)
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{OwnedPods: owned, EventPerBatch: true})
	require.NoError(t, err)
	assert.Equal(t, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), cfg.Kind)
	assert.Equal(t, schema.GroupResource{Group: "apps", Resource: "replicasets"}, cfg.Cluster.Resource)
	require.NotNil(t, cfg.Cluster.CacheVersions.Pods, "the manager's cache: the gate is on")
	assert.False(t, cfg.DisableConsistencyGate)
	pc, ok := cfg.Cluster.PodClient.(ctrlruntime.PodControl)
	require.True(t, ok)
	assert.Equal(t, map[string]string{"a": "b"}, pc.Labels)
	assert.Equal(t, pc.Labels, pc.PodStamp(nil), "the stamp the Controller checks selectors against")
	assert.Equal(t, mgr.GetAPIReader(), pc.APIReader, "GetPod reads the API server")
	assert.True(t, pc.EventPerBatch)
	assert.NotNil(t, pc.Recorder)
	pc.Recorder.Eventf(&appsv1.ReplicaSet{}, corev1.EventTypeNormal, "Test", "dropped: the manager is not running")

	_, err = cfg.Cluster.Owners.Get(ns, "web")
	var notStarted *cache.ErrCacheNotStarted
	assert.ErrorAs(t, err, &notStarted, "Get reads the cache")
	_, err = cfg.Cluster.Owners.GetLive(t.Context(), ns, "web")
	require.Error(t, err)
	assert.NotErrorAs(t, err, &notStarted, "GetLive reads the API server")

	_, err = ctrlruntime.NewConfig[*appsv1.ReplicaSet](nil, ctrlruntime.ConfigOptions{})
	assert.ErrorContains(t, err, "ctrlruntime: NewConfig: nil manager")
}

// a sync the consistency gate defers is retried with backoff:
// with a Backoff (Register's), a RequeueAfter that grows with each deferral
// and no error (so no "Reconciler error" log line and no error count);
// without, the deferral as its error, for controller-runtime's rate
// limiter. The OnSync hook sees every deferral.
func TestReconcilerRequeuesADeferral(t *testing.T) {
	rs, _, cfg := fakeReplicaSet(t, 0)
	podsVersion := "5"
	cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: func() string { return podsVersion }}
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	c.Gate().Wrote("default/web", "uid-web", expectations.PodsResource, "9")

	var seen []error
	backoff := workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]()
	r := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: c, Backoff: backoff, OnSync: func(_ context.Context, key string, _ reconcile.SyncResult, err error) {
		assert.Equal(t, "default/web", key)
		seen = append(seen, err)
	}}
	req := crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(rs)}
	var delays []time.Duration
	for range 3 {
		res, err := r.Reconcile(t.Context(), req)
		require.NoError(t, err)
		delays = append(delays, res.RequeueAfter)
	}
	assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}, delays,
		"the default controller rate limiter's per-item backoff, as upstream's AddRateLimited")
	require.Len(t, seen, 3)
	var stale *expectations.StaleCacheError
	assert.ErrorAs(t, seen[0], &stale)

	bare := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: c}
	res, err := bare.Reconcile(t.Context(), req)
	assert.ErrorIs(t, err, reconcile.ErrDeferred, "no Backoff: the deferral is the error, rate-limited by the queue")
	assert.NotErrorIs(t, err, crreconcile.TerminalError(nil))
	assert.Zero(t, res)

	podsVersion = "9"
	res, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Zero(t, res, "the cache caught up: synced")
	assert.Zero(t, backoff.NumRequeues(req), "the backoff is forgotten")
	require.Len(t, seen, 4)
	assert.NoError(t, seen[3])
}

// A sync the fence refused is retried one second later, without an error
// and without backoff: the owners synced while the fence was closed are
// synced again as soon as it opens, not minutes later.
func TestReconcilerRetriesAFencedSyncASecondLater(t *testing.T) {
	rs, cl, cfg := fakeReplicaSet(t, 1)
	closed := errors.New("the shard's Lease renewal is late")
	fence := closed
	cfg.Fence = func() error { return fence }
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)

	var seen []error
	backoff := workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]()
	r := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: c, Backoff: backoff, OnSync: func(_ context.Context, _ string, _ reconcile.SyncResult, err error) {
		seen = append(seen, err)
	}}
	req := crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(rs)}
	for range 3 {
		res, err := r.Reconcile(t.Context(), req)
		require.NoError(t, err, "a closed fence is not the owner's failure")
		assert.Equal(t, crreconcile.Result{RequeueAfter: time.Second}, res, "retried a second later, every time")
		assert.Zero(t, backoff.NumRequeues(req), "not backed off")
	}
	require.Len(t, seen, 3)
	assert.ErrorIs(t, seen[0], reconcile.ErrFenced, "OnSync still sees the refusal")
	assert.ErrorIs(t, seen[0], closed)

	bare := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: c}
	res, err := bare.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, crreconcile.Result{RequeueAfter: time.Second}, res, "the same without a Backoff")

	fence = nil
	res, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Zero(t, res, "the fence opened: the sync went through")
	pods := &corev1.PodList{}
	require.NoError(t, cl.List(t.Context(), pods))
	assert.Len(t, pods.Items, 1, "the pod the fence held back was created")
}

// fakeReplicaSet is a ReplicaSet "web" of replicas pods on controller-runtime's
// fake client, and a Config of upstream's ReplicaSet controller over it
// whose caches count as synced (the fake client holds everything from the
// start).
func fakeReplicaSet(t *testing.T, replicas int32) (*appsv1.ReplicaSet, client.Client, reconcile.Config[*appsv1.ReplicaSet]) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "uid-web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}}
	cl := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rs).Build()
	cfg := reconcile.ReplicaSets()
	owners, err := ctrlruntime.NewOwners[*appsv1.ReplicaSet](cl, cl, scheme(t))
	require.NoError(t, err)
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = owners, ctrlruntime.Pods{Reader: cl}, ctrlruntime.PodControl{Client: cl}
	cfg.Cluster.StatusWriter = ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{Client: cl}
	cfg.Cluster.CachesSynced = func() bool { return true }
	return rs, cl, cfg
}
