// Package operator stands for a controller-runtime operator of the k8s.io
// v0.33 era before it adopts reconcilekit: its go.mod is what
// controller-runtime v0.21.0 and k8s.io v0.33.0 resolve to. The footprint
// test in the module above copies this directory, adopts the root module and
// compares the go.mod files.
package operator

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler is the operator's pod reconciler.
type Reconciler struct {
	Client    client.Client
	Clientset kubernetes.Interface
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Reconcile does nothing: the module exists for its go.mod.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pod corev1.Pod
	_ = metav1.Now()
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Get(ctx, req.NamespacedName, &pod))
}
