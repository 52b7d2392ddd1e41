package podops

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// LeanPods is an informer transform that replaces a pod by
// reconcile.LeanPod of it (docs/rules.md, R-13.6) and drops the
// managedFields of any other object ([TrimManagedFields]). The pod it is
// given is not modified: the cache stores the new, small pod and the
// decoded one becomes garbage. LeanPod is idempotent, as a transform must
// be. It never fails.
func LeanPods(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		if pod == nil {
			return obj, nil
		}
		return reconcile.LeanPod(pod), nil
	}
	return TrimManagedFields(obj)
}
