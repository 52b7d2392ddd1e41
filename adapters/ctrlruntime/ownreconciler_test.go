package ctrlruntime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Options.NewReconciler: the controller runs the user's reconciler, built
// once from the manager's client and the pod step Register would have run
// (its Backoff set, OnSync passed on); Options.Owns adds a watch per kind.
// A nil reconciler or a nil kind is refused, not a panic.
func TestRegisterRunsYourReconciler(t *testing.T) {
	mgr := newManager(t)
	c := managerController(t, mgr)
	var calls int
	var gotClient client.Client
	var gotPods crreconcile.Reconciler
	own := func(cl client.Client, pods crreconcile.Reconciler) crreconcile.Reconciler {
		calls++
		gotClient, gotPods = cl, pods
		return crreconcile.Func(func(context.Context, crreconcile.Request) (crreconcile.Result, error) {
			return crreconcile.Result{RequeueAfter: time.Minute}, nil
		})
	}
	onSync := func(context.Context, string, reconcile.SyncResult, error) {}
	ctl, err := ctrlruntime.Register(mgr, "own", c, ctrlruntime.Options{NewReconciler: own, Owns: []client.Object{&corev1.Service{}, &corev1.ConfigMap{}}, OnSync: onSync})
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.True(t, gotClient == mgr.GetClient(), "the manager's client")
	pods, ok := gotPods.(ctrlruntime.Reconciler[*appsv1.ReplicaSet])
	require.True(t, ok, "the pod step is Register's Reconciler: %T", gotPods)
	assert.Same(t, c, pods.Controller)
	assert.NotNil(t, pods.Backoff, "deferrals are retried with backoff, as Register's own")
	assert.NotNil(t, pods.OnSync)
	res, err := ctl.Reconcile(t.Context(), crreconcile.Request{})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, res.RequeueAfter, "the controller runs the user's reconciler")

	nilReconciler := func(client.Client, crreconcile.Reconciler) crreconcile.Reconciler { return nil }
	_, err = ctrlruntime.Register(mgr, "own-nil", c, ctrlruntime.Options{NewReconciler: nilReconciler})
	assert.ErrorContains(t, err, "ctrlruntime: Register: Options.NewReconciler returned nil")
	_, err = ctrlruntime.Register(mgr, "own-nil-kind", c, ctrlruntime.Options{Owns: []client.Object{nil}})
	assert.ErrorContains(t, err, "ctrlruntime: Register: a nil object in Options.Owns")
}
