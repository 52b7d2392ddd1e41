package main

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// WebApp runs Spec.Replicas pods made from Spec.Template. Its CRD is
// examples/webapp/config/crd (these fields are a subset of that WebApp's).
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WebAppSpec   `json:"spec"`
	Status            WebAppStatus `json:"status,omitempty"`
}

// WebAppSpec is what a WebApp asks for.
type WebAppSpec struct {
	Replicas int32                  `json:"replicas"`
	Selector *metav1.LabelSelector  `json:"selector"`
	Template corev1.PodTemplateSpec `json:"template"`
}

// WebAppStatus counts a WebApp's pods.
type WebAppStatus struct {
	Replicas      int32 `json:"replicas"`
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// WebAppList is a list of WebApps.
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (in *WebApp) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Selector = in.Spec.Selector.DeepCopy()
	in.Spec.Template.DeepCopyInto(&out.Spec.Template)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (in *WebAppList) DeepCopyObject() runtime.Object {
	out := *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]WebApp, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*WebApp)
	}
	return &out
}

// newScheme knows client-go's kinds and WebApp.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "demo.reconcilekit.dev", Version: "v1alpha1"}
	s.AddKnownTypes(gv, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(s, gv)
	return s, clientgoscheme.AddToScheme(s)
}
