package ctrlruntime_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// newManager is a manager that is never started: a fixed RESTMapper keeps
// it (and the informers field indexes create) off the network.
func newManager(t *testing.T) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:         scheme(t),
		Metrics:        metricsserver.Options{BindAddress: "0"},
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper(), nil },
	})
	require.NoError(t, err)
	return mgr
}

func managerController(t *testing.T, mgr ctrl.Manager) *reconcile.Controller[*appsv1.ReplicaSet] {
	t.Helper()
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), mgr.GetScheme(), nil)
	require.NoError(t, err)
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.Status = reconcile.ReplicaSets().Status
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	return c
}

// Register builds a controller in a manager (not started: nothing is
// contacted) from the manager's client, API reader and scheme, and adds the
// field indexes the lookups read, keeping them when a second
// controller registers.
func TestRegisterBuildsAController(t *testing.T) {
	mgr := newManager(t)
	c := managerController(t, mgr)
	assert.NoError(t, ctrlruntime.Register(mgr, "replicaset", c, ctrlruntime.Options{}))
	assert.NoError(t, ctrlruntime.Register(mgr, "replicaset-2", c, ctrlruntime.Options{Workers: 2}))
	inf, err := mgr.GetCache().GetInformer(t.Context(), &corev1.Pod{})
	require.NoError(t, err)
	assert.Contains(t, inf.(toolscache.SharedIndexInformer).GetIndexer().GetIndexers(), "field:"+ctrlruntime.PodControllerField)

	assert.Error(t, ctrlruntime.Register[*appsv1.ReplicaSet](mgr, "x", nil, ctrlruntime.Options{}))
	bad := ctrlruntime.Options{Controller: crcontroller.Options{Reconciler: crreconcile.Func(func(context.Context, crreconcile.Request) (crreconcile.Result, error) {
		return crreconcile.Result{}, nil
	})}}
	assert.ErrorContains(t, ctrlruntime.Register(mgr, "y", c, bad), "Reconciler must be nil")
}

// a sync the consistency gate defers is a rate-limited requeue
// without an error (so no "Reconciler error" log line and no error count),
// and the OnSync hook still sees the deferral.
func TestReconcilerRequeuesADeferral(t *testing.T) {
	zero := int32(0)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "uid-web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}}
	cl := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rs).Build()
	cfg := reconcile.ReplicaSets()
	owners, err := ctrlruntime.NewOwners[*appsv1.ReplicaSet](cl, cl, scheme(t))
	require.NoError(t, err)
	pc := ctrlruntime.PodControl{Client: cl}
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient, cfg.Cluster.PodClient = owners, ctrlruntime.Pods{Reader: cl}, pc, pc
	cfg.Cluster.StatusWriter = ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{Client: cl}
	podsVersion := "5"
	cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: func() string { return podsVersion }}
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	c.Gate().Wrote("default/web", "uid-web", expectations.PodsResource, "9")

	var seen []error
	r := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: c, OnSync: func(_ context.Context, key string, _ reconcile.SyncResult, err error) {
		assert.Equal(t, "default/web", key)
		seen = append(seen, err)
	}}
	req := crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(rs)}
	res, err := r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	//lint:ignore SA1019 the deferral is the one place Requeue is used
	assert.True(t, res.Requeue, "a rate-limited requeue")
	require.Len(t, seen, 1)
	var stale *expectations.StaleCacheError
	assert.ErrorAs(t, seen[0], &stale)

	podsVersion = "9"
	res, err = r.Reconcile(t.Context(), req)
	require.NoError(t, err)
	assert.Zero(t, res, "the cache caught up: synced")
	require.Len(t, seen, 2)
	assert.NoError(t, seen[1])
}
