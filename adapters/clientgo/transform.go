package clientgo

import (
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// TrimManagedFields is the informer transform kube-controller-manager
// installs on its shared informer factory: it drops metadata.managedFields
// from every object before the cache stores it. Nothing reconcile reads
// is dropped (the pods' metadata, spec and status and the owners' stay
// whole), so every rule holds on a trimmed cache, and a typical pod
// shrinks to about half its bytes (docs/fleet.md measures it). Install it on the
// factory whose informers the controller reads:
//
//	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
//		informers.WithTransform(clientgo.TrimManagedFields))
//
// Every informer of that factory is trimmed, so only do this when no code
// reading the factory's caches needs managedFields (server-side apply
// does not: it sends its own). It changes the object it is given in place
// and returns it, as a transform may; it never fails. It is safe for
// concurrent use.
func TrimManagedFields(obj any) (any, error) {
	return podops.TrimManagedFields(obj)
}

var _ cache.TransformFunc = TrimManagedFields
