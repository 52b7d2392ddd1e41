package ctrlruntimetest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
)

// withService is a user's own reconciler: the pod step, then a Service
// named after the ReplicaSet, controlled by it. While early is set it
// returns before doing anything, as a Reconcile that bails out on some
// precondition would.
type withService struct {
	client  client.Client
	pods    crreconcile.Reconciler
	early   *atomic.Bool
	ensured *atomic.Int32
}

func (r withService) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	if r.early.Load() {
		return crreconcile.Result{}, errors.New("bailing out")
	}
	res, err := r.pods.Reconcile(ctx, req)
	ownErr := r.ensureService(ctx, req)
	return ctrlruntime.Combine(res, err, crreconcile.Result{}, ownErr)
}

func (r withService) ensureService(ctx context.Context, req crreconcile.Request) error {
	var rs appsv1.ReplicaSet
	if err := r.client.Get(ctx, req.NamespacedName, &rs); err != nil {
		return client.IgnoreNotFound(err)
	}
	var svc corev1.Service
	err := r.client.Get(ctx, req.NamespacedName, &svc)
	if !apierrors.IsNotFound(err) {
		return err
	}
	r.ensured.Add(1)
	svc = corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: rs.Name}}
	svc.Spec.Selector = rs.Spec.Selector.MatchLabels
	yes := true
	svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}
	return r.client.Create(ctx, &svc)
}

func newWithService(t *testing.T, objects ...client.Object) (*ctrlruntimetest.Env[*appsv1.ReplicaSet], withService) {
	t.Helper()
	var built withService
	calls := 0
	newReconciler := func(c client.Client, pods crreconcile.Reconciler) crreconcile.Reconciler {
		calls++
		built = withService{client: c, pods: pods, early: &atomic.Bool{}, ensured: &atomic.Int32{}}
		return built
	}
	env, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{
		Objects:       objects,
		NewReconciler: newReconciler,
		Owns:          []client.Object{&corev1.Service{}},
	})
	require.NoError(t, err)
	require.Equal(t, 1, calls, "built once")
	assert.NotNil(t, built.client, "Env.Client: its writes become events (below)")
	_, ok := built.pods.(ctrlruntime.Reconciler[*appsv1.ReplicaSet])
	assert.True(t, ok, "the pod step is ctrlruntime.Reconciler: %T", built.pods)
	return env, built
}

// Options.NewReconciler: Settle runs the user's reconciler, which runs
// the pod step (R-10.3: the scale-up's events reach the Controller, so the
// scale-down does not wait) and makes its Service; a write of an owned
// kind (Options.Owns) queues its controller: the Service deleted behind
// the reconciler's back is made again by the next Settle.
func TestYourReconcilerRunsThePodStep(t *testing.T) {
	env, r := newWithService(t, replicaSet(3))
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 3)
	var svc corev1.Service
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &svc))
	assert.Equal(t, map[string]string{"app": "web"}, svc.Spec.Selector)
	assert.NotEmpty(t, svc.UID, "the API server's part of a create, for owned kinds too")

	scale(t, env, 1)
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 1)
	assert.Zero(t, env.Clock.Since(ctrlruntimetest.DefaultStart))

	require.NoError(t, env.Client.Delete(t.Context(), &svc))
	require.NoError(t, env.Settle())
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &svc), "the Service's delete queued its ReplicaSet")
	assert.Equal(t, int32(2), r.ensured.Load())
}

// A write of an owned kind whose controller is not of the owner's kind,
// or that has none, queues nothing.
func TestOwnedKindOfAnotherController(t *testing.T) {
	env, r := newWithService(t)
	require.NoError(t, env.Settle())
	yes := true
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "db", UID: "db-uid", Controller: &yes}}}}
	require.NoError(t, env.Client.Create(t.Context(), other))
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "free"}}))
	require.NoError(t, env.Settle())
	assert.Zero(t, r.ensured.Load(), "no reconcile ran")
}

// The Controller's event methods see every pod and owner event even when
// the user's Reconcile returns before the pod step: the expectations of a
// round settle from the events, not from the reconcile.
func TestEventsReachTheControllerWhenYourReconcileReturnsEarly(t *testing.T) {
	env, r := newWithService(t, replicaSet(2))
	_, err := env.Reconcile(ns + "/web")
	require.NoError(t, err)
	require.Len(t, pods(t, env), 2)
	assert.False(t, env.Controller.Tracker().Satisfied(ns+"/web"), "the creations are not observed yet")
	r.early.Store(true)
	err = env.Settle()
	assert.ErrorContains(t, err, "bailing out")
	assert.True(t, env.Controller.Tracker().Satisfied(ns+"/web"), "observed through the events alone")
	r.early.Store(false)
	require.NoError(t, env.Settle(), "the failed key is retried")
	assert.Len(t, pods(t, env), 2)
}

// New refuses a NewReconciler that returns nil and an Owns it cannot feed.
func TestNewReconcilerErrors(t *testing.T) {
	none := func(client.Client, crreconcile.Reconciler) crreconcile.Reconciler { return nil }
	_, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{NewReconciler: none})
	assert.ErrorContains(t, err, "ctrlruntimetest: New: Options.NewReconciler returned nil")
	_, err = ctrlruntimetest.New(newController, ctrlruntimetest.Options{Owns: []client.Object{nil}})
	assert.ErrorContains(t, err, "ctrlruntimetest: New: a nil object in Options.Owns")
}
