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
// cache:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		Cache: cache.Options{DefaultTransform: ctrlruntime.TrimManagedFields},
//	})
//
// Every informer of that cache is trimmed, so only do this when no code
// reading it needs managedFields. It changes the object it is given in
// place and returns it; it never fails. It is safe for concurrent use.
func TrimManagedFields(obj any) (any, error) {
	return podops.TrimManagedFields(obj)
}

var _ toolscache.TransformFunc = TrimManagedFields
