package controller_test

// The controller-runtime quick start the root README shows, compiled here so
// that it keeps compiling. It is not run.

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

type quickReconciler struct {
	client.Client
	m   *reconcile.Manager
	obs *reconcile.Observer
}

func (r *quickReconciler) ownedPods(*v1alpha1.PodSet) func(context.Context) ([]*corev1.Pod, error) {
	return nil
}

// --- 8< --- controller-runtime quick start
func (r *quickReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ps v1alpha1.PodSet
	if err := r.Get(ctx, req.NamespacedName, &ps); err != nil {
		if apierrors.IsNotFound(err) {
			r.m.Tracker().Delete(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	res, err := r.m.Sync(ctx, reconcile.SyncRequest{
		Owner: reconcile.Owner{Key: req.String(), Object: &ps, Kind: v1alpha1.GroupVersion.WithKind("PodSet"),
			Replicas: *ps.Spec.Replicas, Template: &ps.Spec.Template},
		Deleting: ps.DeletionTimestamp != nil, MinReadySeconds: ps.Spec.MinReadySeconds,
		Pods: r.ownedPods(&ps), // List(InNamespace, MatchingLabelsSelector), keep those whose controller ref is ps
	})
	if err != nil {
		return ctrl.Result{}, err // the sync did not run
	}
	ps.Status.Replicas, ps.Status.ReadyReplicas, ps.Status.AvailableReplicas = res.Counts.Replicas, res.Counts.Ready, res.Counts.Available
	ps.Status.ObservedGeneration = ps.Generation
	ps.Status.Conditions, _ = status.SetReplicaFailure(ps.Status.Conditions, res.ManageErr, res.Diff, ps.Generation, res.Now)
	if err := r.Status().Update(ctx, &ps); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, res.ManageErr
}

func (r *quickReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	r.m = &reconcile.Manager{Pods: reconcile.PodControlFuncs{
		Create: func(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) { return p, c.Create(ctx, p) },
		Delete: func(ctx context.Context, p *corev1.Pod) error { return c.Delete(ctx, p.DeepCopy()) },
	}}
	r.obs = &reconcile.Observer{Expectations: r.m.Tracker(), Kind: "PodSet", Resolve: nil /* Get the PodSet, compare UID */}
	type queue = workqueue.TypedRateLimitingInterface[ctrl.Request]
	enqueue := func(q queue, reqs []reconcile.Request) {
		for _, rq := range reqs {
			ns, name, _ := strings.Cut(rq.Key, "/")
			q.AddAfter(ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}, rq.After)
		}
	}
	return ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.PodSet{}).
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
				enqueue(q, r.obs.PodAdded(e.Object.(*corev1.Pod)))
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
				enqueue(q, r.obs.PodUpdated(e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)))
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
				enqueue(q, r.obs.PodDeleted(e.Object.(*corev1.Pod)))
			},
		}).Complete(r)
}

// --- >8 ---

var _ = (&quickReconciler{}).SetupWithManager
