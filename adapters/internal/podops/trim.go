package podops

import "k8s.io/apimachinery/pkg/api/meta"

// TrimManagedFields is an informer transform that drops an object's
// metadata.managedFields, as kube-controller-manager's informer factory
// does: no controller reads them, and they are a large share of every
// cached object. It changes obj in place (an informer hands a transform
// the object it just decoded) and returns it; what is not an object is
// returned unchanged. It never fails.
func TrimManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}
