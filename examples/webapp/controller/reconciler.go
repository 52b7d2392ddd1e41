package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/examples/webapp/api/v1alpha1"
)

// Finalizer holds a deleted WebApp until the Reconciler has cleaned up
// after it: deleted its Service (so that traffic stops before the pods go)
// and its PodDisruptionBudget. The garbage collector would delete both in
// the end, through their controller references; a finalizer is where an
// operator releases what it does not reach (a DNS record, a cloud load
// balancer).
const Finalizer = "demo.reconcilekit.dev/cleanup"

// DefaultPort is the Service's port when WebAppSpec.Port is 0.
const DefaultPort = 80

// Reconciler is the WebApp's Reconcile: the pod step, then the finalizer,
// the Service and the PodDisruptionBudget. Build it with [NewReconciler]
// (ctrlruntime.Register and ctrlruntimetest.New call it). It is safe for
// concurrent use: controller-runtime never reconciles one WebApp twice at
// once, and it keeps no state of its own.
type Reconciler struct {
	// Client reads and writes the WebApp, its Service and its
	// PodDisruptionBudget (the manager's client: reads from its cache).
	Client client.Client
	// Pods is the pod step: ctrlruntime.Reconciler over the Controller.
	Pods crreconcile.Reconciler
}

var _ crreconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns the [Reconciler] over c and the pod step pods: the
// function ctrlruntime.Options.NewReconciler and
// ctrlruntimetest.Options.NewReconciler take.
func NewReconciler(c client.Client, pods crreconcile.Reconciler) crreconcile.Reconciler {
	return &Reconciler{Client: c, Pods: pods}
}

// Reconcile runs the pod step, then reconciles what else the WebApp owns,
// and returns both results joined (ctrlruntime.Combine).
//
// The pod step runs first and on every request: the pod events enqueue the
// WebApp, and only that step acts on them. On a WebApp being deleted it
// creates, deletes and adopts nothing (reconcile.SyncResult.Deleting), so
// the finalizer removed after it cannot let a pod be created for a WebApp
// that is gone. Its failure does not stop the rest: the Service of a
// WebApp whose pods cannot be created is still made.
func (r *Reconciler) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	podsResult, podsErr := r.Pods.Reconcile(ctx, req)
	ownErr := r.reconcileOwned(ctx, req)
	return ctrlruntime.Combine(podsResult, podsErr, crreconcile.Result{}, ownErr)
}

// reconcileOwned adds the finalizer, then makes the Service and the
// PodDisruptionBudget what the WebApp says; on a WebApp being deleted, it
// cleans up and removes the finalizer instead.
func (r *Reconciler) reconcileOwned(ctx context.Context, req crreconcile.Request) error {
	var app v1alpha1.WebApp
	err := r.Client.Get(ctx, req.NamespacedName, &app)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("webapp: reading the WebApp: %w", err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &app)
	}
	if app.Spec.Selector == nil {
		// Nothing to select: the pod step refuses the WebApp as an
		// invalid spec (terminal, its condition written).
		return nil
	}
	if !controllerutil.ContainsFinalizer(&app, Finalizer) {
		// The finalizer first, so that whatever it cleans up exists only
		// while it is there.
		err = r.patchFinalizers(ctx, &app, controllerutil.AddFinalizer)
		if err != nil {
			return err
		}
	}
	err = r.ensureService(ctx, &app)
	if err != nil {
		return err
	}
	return r.ensurePDB(ctx, &app)
}

// finalize deletes the WebApp's Service and PodDisruptionBudget, then
// removes its finalizer.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.WebApp) error {
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return nil
	}
	key := metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}
	err := r.Client.Delete(ctx, &corev1.Service{ObjectMeta: key})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("webapp: deleting the Service: %w", err)
	}
	err = r.Client.Delete(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: key})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("webapp: deleting the PodDisruptionBudget: %w", err)
	}
	return r.patchFinalizers(ctx, app, controllerutil.RemoveFinalizer)
}

// patchFinalizers applies change (add or remove Finalizer) to app with a
// merge patch that fails on a conflict, so that a finalizer another
// controller added meanwhile is never overwritten.
func (r *Reconciler) patchFinalizers(ctx context.Context, app *v1alpha1.WebApp, change func(client.Object, string) bool) error {
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	change(app, Finalizer)
	err := r.Client.Patch(ctx, app, patch)
	if err != nil {
		return fmt.Errorf("webapp: updating the finalizers: %w", err)
	}
	return nil
}

// ensureService makes the WebApp's Service (same name) select its pods
// and serve its port.
func (r *Reconciler) ensureService(ctx context.Context, app *v1alpha1.WebApp) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	port := app.Spec.Port
	if port == 0 {
		port = DefaultPort
	}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		svc.Spec.Selector = app.Spec.Selector.MatchLabels
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(port)}}
		return controllerutil.SetControllerReference(app, svc, r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("webapp: the Service: %w", err)
	}
	return nil
}

// ensurePDB makes the WebApp's PodDisruptionBudget (same name) cover its
// pods with its MaxUnavailable.
func (r *Reconciler) ensurePDB(ctx context.Context, app *v1alpha1.WebApp) error {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	maxUnavailable := intstr.FromInt32(1)
	if app.Spec.MaxUnavailable != nil {
		maxUnavailable = *app.Spec.MaxUnavailable
	}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, pdb, func() error {
		pdb.Spec.Selector = app.Spec.Selector.DeepCopy()
		pdb.Spec.MaxUnavailable = &maxUnavailable
		return controllerutil.SetControllerReference(app, pdb, r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("webapp: the PodDisruptionBudget: %w", err)
	}
	return nil
}
