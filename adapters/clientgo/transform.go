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

// LeanPods is an informer transform for a pod cache that only the
// controller reads: it replaces each pod by [reconcile.LeanPod] of it, the
// fields the library's rules read and nothing else (docs/rules.md,
// ), and drops managedFields from any other object. Every rule
// (activity, readiness, availability, ranking, status counts, claiming and
// the pod event handlers) answers the same on the lean pod; code that reads
// other pod fields from the same informer (container images, IPs, other
// conditions) sees them empty, so never install it on a factory other
// controllers share. It does not modify the pod it is given (the informer
// stores the new, small one); it never fails; it is idempotent and safe for
// concurrent use. [OwnedPods.Factory] gives the pods a factory of their
// own.
func LeanPods(obj any) (any, error) {
	return podops.LeanPods(obj)
}

var _ cache.TransformFunc = LeanPods
