package v1alpha1_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
)

func sample() *v1alpha1.PodSet {
	n := int32(3)
	return &v1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "b"}},
		Spec: v1alpha1.PodSetSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
		Status: v1alpha1.PodSetStatus{Conditions: []metav1.Condition{{Type: "ReplicaFailure", Status: metav1.ConditionTrue}}},
	}
}

// The hand-written deep copies share no memory with the original.
func TestDeepCopyIsDeep(t *testing.T) {
	orig := sample()
	cp := orig.DeepCopyObject().(*v1alpha1.PodSet)
	require.Equal(t, orig, cp)

	*cp.Spec.Replicas = 9
	cp.Spec.Selector.MatchLabels["app"] = "other"
	cp.Labels["a"] = "changed"
	cp.Status.Conditions[0].Type = "Other"
	assert.Equal(t, sample(), orig, "the original is untouched")

	list := &v1alpha1.PodSetList{Items: []v1alpha1.PodSet{*sample()}}
	lcp := list.DeepCopyObject().(*v1alpha1.PodSetList)
	lcp.Items[0].Status.Conditions[0].Reason = "x"
	assert.Empty(t, list.Items[0].Status.Conditions[0].Reason)

	var nilSet *v1alpha1.PodSet
	assert.Nil(t, nilSet.DeepCopy())
}

// The types are registered under the group and version the CRD serves.
func TestSchemeAndManifestAgree(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	gvks, _, err := scheme.ObjectKinds(&v1alpha1.PodSet{})
	require.NoError(t, err)
	require.Len(t, gvks, 1)

	data, err := os.ReadFile("../../config/crd/demo.reconcilekit.dev_podsets.yaml")
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(data, &crd))
	assert.Equal(t, gvks[0].Group, crd.Spec.Group)
	assert.Equal(t, gvks[0].Kind, crd.Spec.Names.Kind)
	assert.Equal(t, crd.Spec.Names.Plural+"."+crd.Spec.Group, crd.Name)
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]
	assert.Equal(t, gvks[0].Version, v.Name)
	require.NotNil(t, v.Subresources)
	assert.NotNil(t, v.Subresources.Status, "the reconciler writes status through the status subresource")
	for _, field := range []string{"observedGeneration", "replicas", "readyReplicas", "availableReplicas", "terminatingReplicas", "conditions"} {
		assert.Contains(t, v.Schema.OpenAPIV3Schema.Properties["status"].Properties, field)
	}
}
