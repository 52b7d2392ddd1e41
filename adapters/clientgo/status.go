package clientgo

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// ReplicaSetStatus returns the Config.WriteStatus of a ReplicaSet
// controller: the status is computed from the sync's pods
// ([status.Calculate] with opts), nothing is written when the ReplicaSet
// already has it (R-8.6, [status.NeedsUpdate]), and otherwise it is written
// with observedGeneration set to the generation acted on
// ([status.ForWrite]) and one retry on a freshly read object: at most two
// UpdateStatus calls and one GET, the GET's error returned if it fails
// . It never modifies rs (upstream mutates its deep copy).
//
// It returns the server's object after a successful write, and rs itself
// (the same pointer) when nothing needed writing: Sync records either's
// resourceVersion for the consistency gate, and a caller that
// wraps it can tell a write from a skip by comparing the pointers.
func ReplicaSetStatus(client kubernetes.Interface, opts status.Options) func(context.Context, *appsv1.ReplicaSet, reconcile.SyncResult) (*appsv1.ReplicaSet, error) {
	return func(ctx context.Context, rs *appsv1.ReplicaSet, res reconcile.SyncResult) (*appsv1.ReplicaSet, error) {
		newStatus := status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, opts)
		if !status.NeedsUpdate(rs, newStatus) {
			return rs, nil
		}
		toWrite := status.ForWrite(rs, newStatus)
		rsc := client.AppsV1().ReplicaSets(rs.Namespace)
		obj := rs.DeepCopy()
		var updateErr error
		for attempt := range 2 {
			obj.Status = *toWrite.DeepCopy()
			updated, err := rsc.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
			if err == nil {
				return updated, nil
			}
			updateErr = err
			if attempt == 1 {
				break
			}
			if obj, err = rsc.Get(ctx, rs.Name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
		}
		return nil, updateErr
	}
}
