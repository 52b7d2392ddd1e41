// Package v1alpha1 holds the WebApp API (group demo.reconcilekit.dev): a
// custom resource that runs a number of identical pods behind a Service,
// with a PodDisruptionBudget over them, and whose status is replica counts
// and metav1.Conditions.
//
// The package depends only on k8s.io/api and k8s.io/apimachinery. The
// deep-copy methods are written by hand (zz_deepcopy.go); the CRD manifest
// is config/crd/demo.reconcilekit.dev_webapps.yaml.
package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// GroupVersion is the API group and version of WebApp.
var GroupVersion = schema.GroupVersion{Group: "demo.reconcilekit.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers WebApp and WebAppList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the WebApp types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// ConditionReplicaFailure is the condition type set while creating or
// deleting pods fails (package status, SetReplicaFailure).
const ConditionReplicaFailure = "ReplicaFailure"

// WebAppSpec is the desired state of a WebApp.
type WebAppSpec struct {
	// Replicas is the number of pods to keep running; nil means 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the pods the WebApp owns by their labels
	// (matchLabels only: the Service selects the same pods); it must match
	// the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the pod template new pods are made from.
	Template corev1.PodTemplateSpec `json:"template"`
	// Port is the port the Service serves, forwarded to the same port of
	// the pods; 0 means 80.
	// +optional
	Port int32 `json:"port,omitempty"`
	// MaxUnavailable is the PodDisruptionBudget's: how many of the pods an
	// eviction may leave unavailable; nil means 1.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// WebAppStatus is the observed state of a WebApp.
type WebAppStatus struct {
	// ObservedGeneration is the generation the status was computed for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas counts the active pods.
	Replicas int32 `json:"replicas"`
	// ReadyReplicas counts the active pods that are ready.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// AvailableReplicas counts the ready pods that are available.
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// TerminatingReplicas counts the pods being deleted.
	TerminatingReplicas int32 `json:"terminatingReplicas,omitempty"`
	// Conditions: ReplicaFailure while pods cannot be created or deleted.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WebApp runs Spec.Replicas identical pods behind a Service.
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec,omitempty"`
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppList is a list of WebApps.
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}
