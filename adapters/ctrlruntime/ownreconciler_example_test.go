package ctrlruntime_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// withConfigMap is a Reconcile of your own: the pod step first, on every
// request, then what else the owner has (here a ConfigMap), the two
// outcomes joined.
type withConfigMap struct {
	client client.Client
	pods   crreconcile.Reconciler
}

func (r withConfigMap) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	podsResult, podsErr := r.pods.Reconcile(ctx, req)
	ownErr := r.ensureConfigMap(ctx, req)
	return ctrlruntime.Combine(podsResult, podsErr, crreconcile.Result{}, ownErr)
}

func (r withConfigMap) ensureConfigMap(context.Context, crreconcile.Request) error {
	return nil // create or update it, with a controller reference to the owner
}

// Options.NewReconciler makes Register run your reconciler, given the pod
// step; Options.Owns watches the kinds it owns, as a builder's Owns.
func ExampleRegister_yourReconcile() {
	mgr := offlineManager()
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		panic(err)
	}
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.Status = reconcile.ReplicaSets().Status
	c, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}
	newReconciler := func(cl client.Client, pods crreconcile.Reconciler) crreconcile.Reconciler {
		return withConfigMap{client: cl, pods: pods}
	}
	opts := ctrlruntime.Options{NewReconciler: newReconciler, Owns: []client.Object{&corev1.ConfigMap{}}}
	_, err = ctrlruntime.Register(mgr, "replicasets-with-configmaps", c, opts)
	fmt.Println(err)
	// Output: <nil>
}

// Combine keeps the sooner requeue, and never lets one step's terminal
// error stop the other's retry.
func ExampleCombine() {
	res, err := ctrlruntime.Combine(crreconcile.Result{RequeueAfter: time.Minute}, nil, crreconcile.Result{RequeueAfter: time.Second}, nil)
	fmt.Println(res.RequeueAfter, err)
	invalid := crreconcile.TerminalError(reconcile.ErrInvalidSpec)
	_, err = ctrlruntime.Combine(crreconcile.Result{}, invalid, crreconcile.Result{}, fmt.Errorf("service: conflict"))
	fmt.Println(err)
	// Output:
	// 1s <nil>
	// service: conflict
	// ctrlruntime: retried with the other step: terminal error: reconcile: invalid owner spec
}
