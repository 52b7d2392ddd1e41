package reconcile

import (
	"errors"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Owner describes the object whose pods [Manager.ManageReplicas] manages: a
// ReplicaSet (see [ReplicaSetOwner]) or any custom resource that owns pods.
//
// The zero Owner is not usable: ManageReplicas rejects an Owner without an
// Object or a Key. Owner is a plain value; ManageReplicas never modifies
// Object or Template.
type Owner struct {
	// Key is the owner's expectations key, conventionally "namespace/name"
	// (see [OwnerKey]); the workqueue key of the owner.
	Key string
	// Object is the owner itself. Created pods take their namespace from
	// it, their GenerateName (or Name) prefix from its name, and their
	// controller ownerRef from its name and UID.
	Object metav1.Object
	// Kind is the owner's group, version and kind, written into the
	// controller ownerRef of created pods.
	Kind schema.GroupVersionKind
	// Replicas is the desired number of active pods. A negative value is
	// an error.
	Replicas int32
	// Template is the pod template new pods are built from. It must
	// restart its pods (restartPolicy Always or unset) and set no
	// activeDeadlineSeconds: pods that may finish would be replaced without
	// end. ManageReplicas and Sync accept a nil Template
	// when no pods need to be created: deleting needs none.
	Template *corev1.PodTemplateSpec
	// Selector says which pods are the owner's: a [Controller] claims
	// and matches orphans with it. Sync requires
	// it valid, not empty and matching Template's labels ([Owner.Validate],
	// ManageReplicas does not read it.
	Selector *metav1.LabelSelector
	// MinReadySeconds is how long a ready pod must stay ready to count as
	// available; > 0 also schedules the availability requeue
	// and the extra request when a pod turns ready.
	// ManageReplicas does not read it.
	MinReadySeconds int32
}

// replicaSetKind is the kind written into the controller ownerRef of pods
// created for a ReplicaSet.
var replicaSetKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// ReplicaSetOwner describes rs as an [Owner]: kind apps/v1 ReplicaSet, key
// "namespace/name" ([OwnerKey]), Replicas from Spec.Replicas (nil counts as
// 1, the API default), Template pointing at rs.Spec.Template, Selector
// rs.Spec.Selector and MinReadySeconds from the spec. The result
// points into rs; ManageReplicas never modifies it. A nil rs yields an Owner
// that ManageReplicas rejects with an error.
func ReplicaSetOwner(rs *appsv1.ReplicaSet) Owner {
	if rs == nil {
		return Owner{Kind: replicaSetKind}
	}
	replicas := int32(1)
	if rs.Spec.Replicas != nil {
		replicas = *rs.Spec.Replicas
	}
	return Owner{
		Key:      OwnerKey(rs.Namespace, rs.Name),
		Object:   rs,
		Kind:     replicaSetKind,
		Replicas: replicas,
		Template: &rs.Spec.Template,

		Selector:        rs.Spec.Selector,
		MinReadySeconds: rs.Spec.MinReadySeconds,
	}
}

// OwnerKey returns the controller key of an object: "namespace/name",
// or just "name" when namespace is empty.
func OwnerKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// PodKey returns the key under which expectations track pod: always
// "namespace/name", even for an empty namespace. A nil pod yields "".
func PodKey(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Namespace + "/" + pod.Name
}

// validate reports why o cannot be managed at all.
func (o *Owner) validate() error {
	if isNil(o.Object) {
		return errors.New("reconcile: owner has no Object")
	}
	if o.Key == "" {
		return errors.New("reconcile: owner has an empty Key")
	}
	if o.Replicas < 0 {
		return fmt.Errorf("reconcile: owner %s wants %d replicas; must not be negative", o.Key, o.Replicas)
	}
	return nil
}

// validateTemplate reports why no pod can be built from o's template: it
// is nil or makes pods that may finish (the template half of
// [Owner.Validate] that does not need the selector).
func (o *Owner) validateTemplate() error {
	if o.Template == nil {
		return &specError{key: o.Key, errs: field.ErrorList{field.Required(specPath.Child("template"), "")}}
	}
	if errs := o.validatePodTemplateSpec(); len(errs) > 0 {
		return &specError{key: o.Key, errs: errs}
	}
	return nil
}

// isNil reports whether obj is nil or a typed nil pointer in an interface.
func isNil(obj metav1.Object) bool { return isNilValue(obj) }

// isNilValue reports whether v is nil or a nil pointer, map, slice, func or
// channel in an interface.
func isNilValue(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// controlledByOther reports whether pod has a controller ownerRef that names
// an object other than owner (by UID). Orphans are not controlled by another.
func controlledByOther(pod *corev1.Pod, owner metav1.Object) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && ref.UID != owner.GetUID()
}

// newPod builds the pod to create for o: namespace from the owner,
// labels, annotations, finalizers and spec deep-copied from the template,
// and a controller ownerRef to the owner. name, when non-empty, is used as
// the pod's Name; otherwise GenerateName is "<owner name>-".
func (o *Owner) newPod(name string) *corev1.Pod {
	t := o.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       o.Object.GetNamespace(),
			Labels:          copyMap(t.Labels),
			Annotations:     copyMap(t.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(o.Object, o.Kind)},
		},
	}
	if name != "" {
		pod.Name = name
	} else {
		pod.GenerateName = namePrefix(o.Object.GetName())
	}
	if t.Finalizers != nil {
		pod.Finalizers = append([]string(nil), t.Finalizers...)
	}
	t.Spec.DeepCopyInto(&pod.Spec)
	return pod
}

// namePrefix is the prefix of generated pod names: the owner's name and a dash.
func namePrefix(ownerName string) string { return ownerName + "-" }

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
