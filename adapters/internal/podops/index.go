package podops

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ControllerKey is the key of upstream's pod index by controller reference
// (PodControllerIndexKey in k8s.io/kubernetes/pkg/controller): for a
// controller ownerRef, "namespace/kind/name/uid"; for an orphan (ref nil),
// the namespace alone.
func ControllerKey(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return namespace
	}
	return namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

// PodControllerKeys returns the one index key of pod: ControllerKey of its
// namespace and its controller ownerRef.
func PodControllerKeys(pod *corev1.Pod) []string {
	return []string{ControllerKey(pod.Namespace, metav1.GetControllerOfNoCopy(pod))}
}

// OwnedKeys returns the two keys a lookup by owner reads: the owner's
// (kind, name, uid in namespace) and the namespace's orphans'.
func OwnedKeys(namespace, kind, name string, uid types.UID) [2]string {
	return [2]string{
		ControllerKey(namespace, &metav1.OwnerReference{Kind: kind, Name: name, UID: uid}),
		ControllerKey(namespace, nil),
	}
}

// ControlledByOrOrphan reports whether pod is in namespace and has either
// no controller ownerRef or one with exactly kind, name and uid: what the
// two OwnedKeys lookups return. The fallback without an index filters with
// it.
func ControlledByOrOrphan(pod *corev1.Pod, namespace, kind, name string, uid types.UID) bool {
	if pod == nil || pod.Namespace != namespace {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref == nil || (ref.Kind == kind && ref.Name == name && ref.UID == uid)
}

// ControllerUIDKeys returns the key of upstream's ReplicaSet index by
// controller UID for obj: its controller ownerRef's UID, or none.
func ControllerUIDKeys(obj metav1.Object) []string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return nil
	}
	return []string{string(ref.UID)}
}

// HasControllerUID reports whether obj is in namespace and its controller
// ownerRef has uid.
func HasControllerUID(obj metav1.Object, namespace string, uid types.UID) bool {
	if obj.GetNamespace() != namespace {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}
