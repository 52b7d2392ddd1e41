package controller_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/examples/webapp/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/webapp/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const ns = "default"

var key = client.ObjectKey{Namespace: ns, Name: "web"}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	require.NoError(t, v1alpha1.AddToScheme(s))
	return s
}

func webApp(replicas int32) *v1alpha1.WebApp {
	labels := map[string]string{"app": "web"}
	return &v1alpha1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "web-uid", Generation: 1},
		Spec: v1alpha1.WebAppSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}

// newEnv runs the operator as SetupWithManager wires it: controller.New
// for the pod step, controller.NewReconciler around it, controller.Owns
// watched.
func newEnv(t *testing.T, opts ctrlruntimetest.Options) *ctrlruntimetest.Env[*v1alpha1.WebApp] {
	t.Helper()
	opts.Scheme = scheme(t)
	opts.NewReconciler = controller.NewReconciler
	opts.Owns = controller.Owns()
	env, err := ctrlruntimetest.New(controller.New, opts)
	require.NoError(t, err)
	return env
}

func pods(t *testing.T, env *ctrlruntimetest.Env[*v1alpha1.WebApp]) []*corev1.Pod {
	t.Helper()
	p, err := env.Pods(ns)
	require.NoError(t, err)
	return p
}

func get(t *testing.T, env *ctrlruntimetest.Env[*v1alpha1.WebApp], obj client.Object) error {
	t.Helper()
	return env.Client.Get(t.Context(), key, obj)
}

func update(t *testing.T, env *ctrlruntimetest.Env[*v1alpha1.WebApp], change func(*v1alpha1.WebApp)) {
	t.Helper()
	var app v1alpha1.WebApp
	require.NoError(t, get(t, env, &app))
	change(&app)
	require.NoError(t, env.Client.Update(t.Context(), &app))
}

// A WebApp gets its finalizer, its pods, a Service selecting them and a
// PodDisruptionBudget over them; it scales up and down without waiting
// out the expectations (every pod event reaches the Controller, R-10.3),
// and a pod deleted behind its back is replaced: a pod event runs the
// pod step through the operator's own Reconcile.
func TestScaleUpAndDown(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{webApp(3)}})
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 3)
	var app v1alpha1.WebApp
	require.NoError(t, get(t, env, &app))
	assert.Equal(t, []string{controller.Finalizer}, app.Finalizers)
	assert.Equal(t, int32(3), app.Status.Replicas, "the pod step writes the status")
	var svc corev1.Service
	require.NoError(t, get(t, env, &svc))
	assert.Equal(t, map[string]string{"app": "web"}, svc.Spec.Selector)
	assert.Equal(t, int32(controller.DefaultPort), svc.Spec.Ports[0].Port)
	assert.Equal(t, app.UID, metav1.GetControllerOf(&svc).UID)
	var pdb policyv1.PodDisruptionBudget
	require.NoError(t, get(t, env, &pdb))
	assert.Equal(t, intstr.FromInt32(1), *pdb.Spec.MaxUnavailable)
	assert.Equal(t, app.Spec.Selector, pdb.Spec.Selector)

	update(t, env, func(app *v1alpha1.WebApp) { *app.Spec.Replicas = 5 })
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 5)
	update(t, env, func(app *v1alpha1.WebApp) { *app.Spec.Replicas = 1 })
	require.NoError(t, env.Settle())
	require.Len(t, pods(t, env), 1)

	require.NoError(t, env.Client.Delete(t.Context(), pods(t, env)[0]))
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 1, "replaced")
	assert.Zero(t, env.Clock.Since(ctrlruntimetest.DefaultStart), "no expectation timed out")
	assert.True(t, env.Controller.Tracker().Satisfied(ns+"/web"))
}

// A spec change reaches the Service and the PodDisruptionBudget; one
// deleted or changed behind the operator's back is put back (its events
// queue the WebApp: controller.Owns).
func TestServiceAndPDBFollowTheSpec(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{webApp(2)}})
	require.NoError(t, env.Settle())
	two := intstr.FromString("50%")
	update(t, env, func(app *v1alpha1.WebApp) {
		app.Spec.Port = 8080
		app.Spec.MaxUnavailable = &two
	})
	require.NoError(t, env.Settle())
	var svc corev1.Service
	require.NoError(t, get(t, env, &svc))
	assert.Equal(t, int32(8080), svc.Spec.Ports[0].Port)
	assert.Equal(t, intstr.FromInt32(8080), svc.Spec.Ports[0].TargetPort)
	var pdb policyv1.PodDisruptionBudget
	require.NoError(t, get(t, env, &pdb))
	assert.Equal(t, two, *pdb.Spec.MaxUnavailable)

	require.NoError(t, env.Client.Delete(t.Context(), &svc))
	pdb.Spec.MaxUnavailable = nil
	require.NoError(t, env.Client.Update(t.Context(), &pdb))
	require.NoError(t, env.Settle())
	require.NoError(t, get(t, env, &svc), "the Service is made again")
	require.NoError(t, get(t, env, &pdb))
	assert.Equal(t, two, *pdb.Spec.MaxUnavailable, "the PodDisruptionBudget is put back")
	assert.Len(t, pods(t, env), 2)
}

// Deleting a WebApp: the finalizer holds it while the operator deletes
// its Service and PodDisruptionBudget, then goes; the pod step, seeing the
// WebApp being deleted, creates nothing; the Controller forgets
// it once it is gone.
func TestDeletionCleansUpThenRemovesTheFinalizer(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{webApp(2)}})
	require.NoError(t, env.Settle())
	require.NoError(t, env.Client.Delete(t.Context(), webApp(0)))
	var app v1alpha1.WebApp
	require.NoError(t, get(t, env, &app), "held by the finalizer")
	assert.False(t, app.DeletionTimestamp.IsZero())

	require.NoError(t, env.Settle())
	assert.True(t, apierrors.IsNotFound(get(t, env, &app)), "the finalizer removed: gone")
	assert.True(t, apierrors.IsNotFound(get(t, env, &corev1.Service{})))
	assert.True(t, apierrors.IsNotFound(get(t, env, &policyv1.PodDisruptionBudget{})))
	assert.Len(t, pods(t, env), 2, "the garbage collector's to delete, not the operator's")
	assert.Zero(t, env.Controller.Len(), "forgotten")
}

// A WebApp deleted in the middle of a scale-up creates no pod: the
// scale-up's first sync stops at a failed create (slow start), the WebApp
// is deleted, and the syncs after that, with creates working again, see it
// being deleted and create nothing before the finalizer lets it go. The
// failed pod step does not stop the rest of the Reconcile: the Service
// was made.
func TestDeletedMidScaleUpCreatesNoPod(t *testing.T) {
	var failCreates atomic.Bool
	failCreates.Store(true)
	var created atomic.Int32
	failAfterOne := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*corev1.Pod); ok {
			if failCreates.Load() && created.Load() >= 1 {
				return apierrors.NewServiceUnavailable("injected")
			}
			created.Add(1)
		}
		return c.Create(ctx, obj, opts...)
	}}
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{webApp(10)}, Interceptor: failAfterOne})
	_, err := env.Reconcile(ns + "/web")
	require.Error(t, err, "the second batch failed")
	require.Len(t, pods(t, env), 1)
	require.NoError(t, get(t, env, &corev1.Service{}), "the Service was made all the same")

	require.NoError(t, env.Client.Delete(t.Context(), webApp(0)))
	failCreates.Store(false)
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 1, "no pod created for a WebApp being deleted")
	assert.Equal(t, int32(1), created.Load())
	var app v1alpha1.WebApp
	assert.True(t, apierrors.IsNotFound(get(t, env, &app)))
}

// An invalid WebApp (its selector does not match its template) is a
// terminal error of the pod step, with no pod created; the rest of the
// Reconcile still runs, and the WebApp is not retried until it changes.
func TestInvalidSpecIsTerminal(t *testing.T) {
	bad := webApp(2)
	bad.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{bad}})
	err := env.Settle()
	assert.ErrorIs(t, err, reconcile.ErrInvalidSpec)
	assert.Empty(t, pods(t, env))
	assert.NoError(t, env.Settle(), "not retried")
	var app v1alpha1.WebApp
	require.NoError(t, get(t, env, &app))
	require.Len(t, app.Status.Conditions, 1)
	assert.Equal(t, v1alpha1.ConditionReplicaFailure, app.Status.Conditions[0].Type)

	noSelector := webApp(1)
	noSelector.Name, noSelector.UID = "none", "none-uid"
	noSelector.Spec.Selector = nil
	require.NoError(t, env.Client.Create(t.Context(), noSelector))
	err = env.Settle()
	assert.True(t, errors.Is(err, reconcile.ErrInvalidSpec), "refused, not a panic: %v", err)
}
