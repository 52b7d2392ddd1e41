// Package controller is the WebApp operator for controller-runtime: a
// kubebuilder-style Reconcile ([Reconciler]) that owns more than pods (a
// finalizer, a Service and a PodDisruptionBudget) and runs reconcilekit's
// pod management as one step of it. The pod step is a
// [reconcile.Controller] behind ctrlruntime.Reconciler: expectations,
// adoption and release, slow-start creates, ranked deletes, the consistency
// gate, the creation breaker and the status of counts plus a
// ReplicaFailure metav1.Condition.
//
// [SetupWithManager] wires it into a manager; its tests run the same
// [NewReconciler] on package ctrlruntimetest.
package controller

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/examples/webapp/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// Controller manages a WebApp's pods; it is a [reconcile.Controller].
type Controller = reconcile.Controller[*v1alpha1.WebApp]

// Owns are the kinds the [Reconciler] creates with a controller reference
// to the WebApp, besides pods: their events queue the WebApp, so that a
// Service or PodDisruptionBudget changed or deleted behind its back is put
// back (ctrlruntime.Options.Owns, ctrlruntimetest.Options.Owns).
func Owns() []client.Object {
	return []client.Object{&corev1.Service{}, &policyv1.PodDisruptionBudget{}}
}

// The WebApp operator's permissions, from which config/rbac/role.yaml is
// written (by hand: the same rules, as controller-gen would write them).
// The pods, events and webapps rules are the PodSet controller's, for the
// same reasons (examples/README.md, "Deploying"); services and
// poddisruptionbudgets are the Reconciler's own objects; webapps update and
// patch add and remove its finalizer.
//
// +kubebuilder:rbac:groups=demo.reconcilekit.dev,resources=webapps,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=demo.reconcilekit.dev,resources=webapps/status,verbs=update
// +kubebuilder:rbac:groups=demo.reconcilekit.dev,resources=webapps/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager builds the Controller from mgr (ctrlruntime.NewConfig:
// the consistency gate and the sync guard on, as in production) and
// registers it with [NewReconciler] as the reconciler and [Owns] watched.
// Call it once per process, before mgr.Start.
func SetupWithManager(mgr ctrl.Manager) (*Controller, error) {
	cfg, err := ctrlruntime.NewConfig[*v1alpha1.WebApp](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		return nil, err
	}
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	opts := ctrlruntime.Options{NewReconciler: NewReconciler, Owns: Owns()}
	_, err = ctrlruntime.Register(mgr, "webapp", c, opts)
	return c, err
}

// New builds the Controller from cfg, whose Kind and Cluster the adapter
// filled (ctrlruntime.NewConfig from a manager; ctrlruntimetest.New in
// tests): what a WebApp asks for and what its status is.
func New(cfg reconcile.Config[*v1alpha1.WebApp]) (*Controller, error) {
	cfg.Describe = describe
	cfg.Status = computeStatus
	return reconcile.NewController(cfg)
}

// describe says what a WebApp asks for.
func describe(app *v1alpha1.WebApp) (reconcile.Owner, error) {
	replicas := int32(1)
	if app.Spec.Replicas != nil {
		replicas = *app.Spec.Replicas
	}
	owner := reconcile.Owner{
		Replicas: replicas,
		Template: &app.Spec.Template,
		Selector: app.Spec.Selector,
	}
	return owner, nil
}

// computeStatus is a WebApp's status after a sync: counts, the observed
// generation and the ReplicaFailure condition; false when it is already
// right.
func computeStatus(app *v1alpha1.WebApp, res reconcile.SyncResult) (*v1alpha1.WebApp, bool) {
	next := app.DeepCopy()
	next.Status.Replicas = res.Counts.Replicas
	next.Status.ReadyReplicas = res.Counts.Ready
	next.Status.AvailableReplicas = res.Counts.Available
	next.Status.TerminatingReplicas = res.Counts.Terminating
	next.Status.ObservedGeneration = app.Generation
	conditions, _ := status.SetReplicaFailure(app.Status.Conditions, res.ManageErr, res.Diff, app.Generation, res.Now)
	next.Status.Conditions = conditions
	changed := !equality.Semantic.DeepEqual(next.Status, app.Status)
	return next, changed
}
