package ctrlruntime

import (
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// TrimManagedFields is the informer transform kube-controller-manager
// installs on its informers: it drops metadata.managedFields from every
// object before the cache stores it, and nothing reconcile reads (docs/fleet.md
// measures what it saves). It does what controller-runtime's
// cache.TransformStripManagedFields() does. Install it on the manager's
// cache (cache.Options.DefaultTransform; see the OwnedPods example).
// Every informer of that cache is trimmed, so only do this when no code
// reading it needs managedFields. It changes the object it is given in
// place and returns it; it never fails. It is safe for concurrent use.
func TrimManagedFields(obj any) (any, error) {
	return podops.TrimManagedFields(obj)
}

var _ toolscache.TransformFunc = TrimManagedFields

// LeanPods is a transform for a pod cache that only the controller reads:
// it replaces each pod by [reconcile.LeanPod] of it, the fields the
// library's rules read and nothing else (docs/rules.md, R-13.6), and drops
// managedFields from any other object. Install it on the pods alone
// (cache.Options.ByObject[&corev1.Pod{}].Transform, which
// [OwnedPods.CacheOptions] keeps; see the OwnedPods example). Every rule
// answers the same on the lean pod; anything else reading pods through
// the same manager cache (another controller, a webhook, a Config.Status
// reading container fields) sees the dropped fields empty.
// It does not modify the pod it is given; it never fails; it is idempotent
// and safe for concurrent use.
func LeanPods(obj any) (any, error) {
	return podops.LeanPods(obj)
}

var _ toolscache.TransformFunc = LeanPods
