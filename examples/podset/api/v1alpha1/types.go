// Package v1alpha1 holds the PodSet API (group demo.reconcilekit.dev): a
// custom resource that keeps a number of identical pods running, like a
// ReplicaSet, with its status as replica counts and metav1.Conditions.
//
// The package depends only on k8s.io/api and k8s.io/apimachinery, so that
// clients can import it cheaply. The deep-copy methods are written by hand
// (zz_deepcopy.go); the CRD manifest is
// config/crd/demo.reconcilekit.dev_podsets.yaml.
package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of PodSet.
var GroupVersion = schema.GroupVersion{Group: "demo.reconcilekit.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers PodSet and PodSetList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the PodSet types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &PodSet{}, &PodSetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// ConditionReplicaFailure is the condition type set while creating or
// deleting pods fails (package status, SetReplicaFailure).
const ConditionReplicaFailure = "ReplicaFailure"

// OwnedLabel is the label key the PodSet controller stamps, with the value
// "true", on every pod it creates when its pod cache holds only its own
// pods (-owned-pods-label=demo.reconcilekit.dev/owned=true; docs/rules.md
// A PodSet's selector must not mention it: one that excludes it
// would release every pod created. The CRD refuses such a selector, and
// config/admission's ValidatingAdmissionPolicy refuses an update that
// removes the label from a pod a PodSet controls (which the pod cache
// would report as deleted).
const OwnedLabel = "demo.reconcilekit.dev/owned"

// PodSetSpec is the desired state of a PodSet.
type PodSetSpec struct {
	// Replicas is the number of pods to keep running; nil means 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// MinReadySeconds is how long a pod must be ready to count as available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
	// Selector selects the pods the PodSet owns; it must match the
	// template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the pod template new pods are made from.
	Template corev1.PodTemplateSpec `json:"template"`
}

// PodSetStatus is the observed state of a PodSet.
type PodSetStatus struct {
	// ObservedGeneration is the generation the status was computed for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas counts the active pods.
	Replicas int32 `json:"replicas"`
	// ReadyReplicas counts the active pods that are ready.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// AvailableReplicas counts the ready pods ready for MinReadySeconds.
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// TerminatingReplicas counts the pods being deleted.
	TerminatingReplicas int32 `json:"terminatingReplicas,omitempty"`
	// Conditions: ReplicaFailure while pods cannot be created or deleted.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PodSet keeps Spec.Replicas identical pods running.
type PodSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PodSetSpec   `json:"spec,omitempty"`
	Status PodSetStatus `json:"status,omitempty"`
}

// PodSetList is a list of PodSets.
type PodSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodSet `json:"items"`
}
