package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podsOf returns the pods a sync of owner reads: those whose
// controller ownerRef has Config.Kind's kind and owner's name and UID, and
// the orphans. A PodsByController answers for a namespaced owner; otherwise
// the namespace's pods are listed and filtered to the same pods.
func (c *Controller[T]) podsOf(owner T) ([]*corev1.Pod, error) {
	namespace, name, uid := owner.GetNamespace(), owner.GetName(), owner.GetUID()
	kind := c.cfg.Kind.Kind
	if ix, ok := c.cfg.Cluster.Pods.(PodsByController); ok && namespace != "" {
		return ix.ListByController(namespace, kind, name, uid)
	}
	all, err := c.cfg.Cluster.Pods.List(namespace)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, pod := range all {
		if pod != nil && controlledByOrOrphan(pod, kind, name, uid) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// controlledByOrOrphan reports whether pod has no controller ownerRef or
// one with exactly kind, name and uid: the pods upstream's index by
// controller reference returns for that owner, orphans included.
func controlledByOrOrphan(pod *corev1.Pod, kind, name string, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref == nil || (ref.Kind == kind && ref.Name == name && ref.UID == uid)
}

// siblings returns the owners of namespace whose controller ownerRef has
// uid: from an OwnersByController, or Owners.List filtered.
func (c *Controller[T]) siblings(namespace string, uid types.UID) ([]T, error) {
	if ix, ok := c.cfg.Cluster.Owners.(OwnersByController[T]); ok {
		return ix.ListByController(namespace, uid)
	}
	all, err := c.cfg.Cluster.Owners.List(namespace)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, o := range all {
		if isNilValue(o) {
			continue
		}
		if ref := controllerOf(o); ref != nil && ref.UID == uid {
			out = append(out, o)
		}
	}
	return out, nil
}
