package controller_test

// The quick start the root README shows, compiled here so that it keeps
// compiling. It is not run.

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

func quickStart(client kubernetes.Interface, pods cache.SharedIndexInformer, q workqueue.TypedRateLimitingInterface[string],
	resolve func(string, metav1.OwnerReference) (reconcile.Owned, bool), match func(*corev1.Pod) []string,
	claimedPods func(*appsv1.ReplicaSet) ([]*corev1.Pod, error)) func(context.Context, string, *appsv1.ReplicaSet) error {
	// --- 8< --- client-go quick start
	m := &reconcile.Manager{Pods: reconcile.PodControlFuncs{
		Create: func(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
			return client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		},
		Delete: func(ctx context.Context, p *corev1.Pod) error {
			return client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
		},
	}}
	obs := &reconcile.Observer{Expectations: m.Tracker(), Resolve: resolve, Match: match}
	enqueue := func(reqs []reconcile.Request) {
		for _, r := range reqs {
			q.AddAfter(r.Key, r.After) // AddAfter with 0 is Add
		}
	}
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { enqueue(obs.PodAdded(o.(*corev1.Pod))) },
		UpdateFunc: func(old, cur any) { enqueue(obs.PodUpdated(old.(*corev1.Pod), cur.(*corev1.Pod))) },
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				enqueue(obs.PodDeleted(p))
			}
		},
	})
	sync := func(ctx context.Context, key string, rs *appsv1.ReplicaSet) error { // rs from the lister
		res, err := m.Sync(ctx, reconcile.SyncRequest{
			Owner: reconcile.ReplicaSetOwner(rs), Deleting: rs.DeletionTimestamp != nil, MinReadySeconds: rs.Spec.MinReadySeconds,
			Pods: func(context.Context) ([]*corev1.Pod, error) { return claimedPods(rs) },
		})
		if err != nil {
			return err // the sync did not run
		}
		if st := status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, status.Options{}); status.NeedsUpdate(rs, st) {
			rs = rs.DeepCopy()
			rs.Status = status.ForWrite(rs, st)
			if _, err := client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		if res.Requeue { // never set when the manage step failed
			q.AddAfter(key, res.RequeueAfter) // the next pod becomes available
		}
		return res.ManageErr
	}
	// --- >8 ---
	return sync
}

var _ = quickStart
