package cluster

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NewReplicaSet returns a ReplicaSet namespace/name with UID "uid-rs-"+name,
// the given replicas, a selector equal to labels and a pod template with
// those labels and one container. It is not stored anywhere: the simulated
// API holds pods only.
func NewReplicaSet(namespace, name string, replicas int32, labels map[string]string) *appsv1.ReplicaSet {
	sel := make(map[string]string, len(labels))
	tmpl := make(map[string]string, len(labels))
	for k, v := range labels {
		sel[k], tmpl[k] = v, v
	}
	return &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: types.UID("uid-rs-" + name), Generation: 1,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tmpl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
			},
		},
	}
}

// ControllerRef returns a controller ownerRef (controller and
// blockOwnerDeletion true) to rs, as the ReplicaSet controller sets it.
func ControllerRef(rs *appsv1.ReplicaSet) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
		Controller: &t, BlockOwnerDeletion: &t,
	}
}

// ControllerOf returns the pod's controller ownerRef (the first with
// controller true), or nil.
func ControllerOf(p *corev1.Pod) *metav1.OwnerReference {
	for i := range p.OwnerReferences {
		if r := &p.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}
