package clientgo

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// ReplicaSetStatusWriter is the [reconcile.StatusWriter] of a ReplicaSet
// controller over client-go: UpdateStatus with upstream's one retry on a
// freshly read object, at most two UpdateStatus calls and one GET, the
// GET's error returned if it fails. The retry carries the status
// the Controller asked for, observedGeneration included, onto the fresh
// object. Config.Status ([reconcile.ReplicaSetStatus], which
// reconcile.ReplicaSets sets) decides whether anything is written at all
// . Client is required; the zero value returns an error. It is safe
// for concurrent use.
type ReplicaSetStatusWriter struct {
	Client kubernetes.Interface
}

var _ reconcile.StatusWriter[*appsv1.ReplicaSet] = ReplicaSetStatusWriter{}

// WriteStatus writes next's status and returns the server's object.
func (w ReplicaSetStatusWriter) WriteStatus(ctx context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	if w.Client == nil {
		return nil, errors.New("clientgo: ReplicaSetStatusWriter: nil Client")
	}
	if next == nil {
		return nil, errors.New("clientgo: ReplicaSetStatusWriter: nil ReplicaSet")
	}
	rsc := w.Client.AppsV1().ReplicaSets(next.Namespace)
	updated, err := rsc.UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if err == nil {
		return updated, nil
	}
	fresh, getErr := rsc.Get(ctx, next.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, getErr
	}
	fresh.Status = *next.Status.DeepCopy()
	updated, err = rsc.UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
	if err != nil {
		return nil, err // the typed client answers an empty object with an error
	}
	return updated, nil
}
