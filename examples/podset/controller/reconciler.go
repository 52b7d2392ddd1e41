// Package controller is a controller-runtime Reconciler for the PodSet custom
// resource (package v1alpha1), built from reconcilekit:
//   - [reconcile.Manager.Sync] decides (expectations, slow-start creates,
//     ranked deletes, counts, availability requeue);
//   - [reconcile.Observer] turns pod watch events into expectation
//     observations and requests (SetupWithManager wires it);
//   - the status is [status.Counts] plus a ReplicaFailure metav1.Condition
//     from [status.SetReplicaFailure], stamped with the observed generation;
//   - [PodControl] creates and deletes pods through a client.Client.
//
// Unlike the ReplicaSet example it does not adopt orphans: it manages only
// the pods whose controller ownerRef names the PodSet.
package controller

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// Reconciler reconciles PodSets. Create it with [New].
type Reconciler struct {
	client   client.Client
	manager  *reconcile.Manager
	observer *reconcile.Observer
}

// Options configure [New]. The zero value is upstream's behaviour.
type Options struct {
	// Recorder receives pod events; nil records none.
	Recorder events.EventRecorder
	// Expectations configures the expectations tracker (e.g.
	// Policy: expectations.EvidenceFirst); the zero value is upstream's.
	Expectations expectations.Options
	// TrackCreations names new pods in the Manager and expects their
	// creation by pod key (reconcilekit's exact expectations); pair it
	// with Expectations.Policy = expectations.EvidenceFirst and a
	// CacheVersion from the pod informer's store (see main.go).
	TrackCreations bool
	// Clock is the Manager's clock; nil means real time.
	Clock reconcile.Clock
}

// New returns a Reconciler that reads and writes through c (in a manager:
// mgr.GetClient(), which reads from the informer cache).
func New(c client.Client, opts Options) *Reconciler {
	tracker := expectations.New(opts.Expectations)
	r := &Reconciler{client: c}
	r.manager = &reconcile.Manager{
		Pods:           PodControl{Client: c, Recorder: opts.Recorder},
		Expectations:   tracker,
		Clock:          opts.Clock,
		TrackCreations: opts.TrackCreations,
	}
	r.observer = &reconcile.Observer{
		Expectations: tracker,
		Kind:         "PodSet",
		Resolve:      r.resolve,
		Match:        func(*corev1.Pod) []string { return nil }, // no adoption
	}
	return r
}

// Observer returns the pod event observer; SetupWithManager wires it to the
// pod watch, tests call it directly.
func (r *Reconciler) Observer() *reconcile.Observer { return r.observer }

// Expectations returns the expectations tracker.
func (r *Reconciler) Expectations() *expectations.Tracker { return r.manager.Tracker() }

// SetupWithManager registers the reconciler: PodSets are the primary
// resource, and pod events go through the Observer (which lowers the
// expectations before it enqueues the owner).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	enqueue := func(q workqueue.TypedRateLimitingInterface[crreconcile.Request], reqs []reconcile.Request) {
		for _, req := range reqs {
			ns, name := splitKey(req.Key)
			item := crreconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
			if req.After > 0 {
				q.AddAfter(item, req.After)
			} else {
				q.Add(item)
			}
		}
	}
	pods := handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[crreconcile.Request]) {
			if p, ok := e.Object.(*corev1.Pod); ok {
				enqueue(q, r.observer.PodAdded(p))
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[crreconcile.Request]) {
			o, ok1 := e.ObjectOld.(*corev1.Pod)
			n, ok2 := e.ObjectNew.(*corev1.Pod)
			if ok1 && ok2 {
				enqueue(q, r.observer.PodUpdated(o, n))
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[crreconcile.Request]) {
			// controller-runtime has already unwrapped a tombstone.
			if p, ok := e.Object.(*corev1.Pod); ok {
				enqueue(q, r.observer.PodDeleted(p))
			}
		},
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.PodSet{}).
		Watches(&corev1.Pod{}, pods).
		Named("podset").
		Complete(r)
}

// resolve finds the PodSet a pod's controller ref names, by name and UID.
func (r *Reconciler) resolve(namespace string, ref metav1.OwnerReference) (reconcile.Owned, bool) {
	var ps v1alpha1.PodSet
	if err := r.client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: ref.Name}, &ps); err != nil || ps.UID != ref.UID {
		return reconcile.Owned{}, false
	}
	return reconcile.Owned{Key: reconcile.OwnerKey(namespace, ps.Name), MinReadySeconds: ps.Spec.MinReadySeconds}, true
}

// Reconcile brings one PodSet towards its desired state.
func (r *Reconciler) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	key := reconcile.OwnerKey(req.Namespace, req.Name)
	var ps v1alpha1.PodSet
	if err := r.client.Get(ctx, req.NamespacedName, &ps); err != nil {
		if apierrors.IsNotFound(err) {
			r.Expectations().Delete(key) // gone: forget what we expected
			return crreconcile.Result{}, nil
		}
		return crreconcile.Result{}, err
	}
	selector, err := metav1.LabelSelectorAsSelector(ps.Spec.Selector)
	if err != nil || selector.Empty() {
		log.FromContext(ctx).Error(err, "Invalid or empty selector; not reconciling")
		return crreconcile.Result{}, nil
	}
	replicas := int32(1)
	if ps.Spec.Replicas != nil {
		replicas = *ps.Spec.Replicas
	}

	res, err := r.manager.Sync(ctx, reconcile.SyncRequest{
		Owner: reconcile.Owner{
			Key:      key,
			Object:   &ps,
			Kind:     v1alpha1.GroupVersion.WithKind("PodSet"),
			Replicas: replicas,
			Template: &ps.Spec.Template,
		},
		Deleting:        ps.DeletionTimestamp != nil,
		MinReadySeconds: ps.Spec.MinReadySeconds,
		Pods: func(ctx context.Context) ([]*corev1.Pod, error) {
			return r.ownedPods(ctx, &ps, selector)
		},
	})
	if err != nil {
		return crreconcile.Result{}, err // the sync did not run to the end: nothing to write
	}

	next := ps.Status.DeepCopy()
	c := res.Counts
	next.Replicas, next.ReadyReplicas, next.AvailableReplicas, next.TerminatingReplicas =
		c.Replicas, c.Ready, c.Available, c.Terminating
	next.ObservedGeneration = ps.Generation
	next.Conditions, _ = status.SetReplicaFailure(ps.Status.Conditions, res.ManageErr, res.Diff, ps.Generation, res.Now)
	if !equality.Semantic.DeepEqual(*next, ps.Status) {
		updated := ps.DeepCopy()
		updated.Status = *next
		if err := r.client.Status().Update(ctx, updated); err != nil {
			return crreconcile.Result{}, err // the status error first, as upstream
		}
	}
	// The manage error after the status error; RequeueAfter is
	// zero when the manage step failed, so it requeues only after both
	// succeeded.
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, res.ManageErr
}

// ownedPods lists the pods of ps: those in its namespace whose controller
// ownerRef names it and whose labels match its selector.
func (r *Reconciler) ownedPods(ctx context.Context, ps *v1alpha1.PodSet, selector labels.Selector) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.client.List(ctx, &list, client.InNamespace(ps.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == ps.UID {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

func splitKey(key string) (namespace, name string) {
	if ns, n, ok := strings.Cut(key, "/"); ok {
		return ns, n
	}
	return "", key
}
