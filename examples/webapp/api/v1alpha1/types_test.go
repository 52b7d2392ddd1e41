package v1alpha1_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/examples/webapp/api/v1alpha1"
)

func sample() *v1alpha1.WebApp {
	n := int32(3)
	one := intstr.FromInt32(1)
	return &v1alpha1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "b"}},
		Spec: v1alpha1.WebAppSpec{
			Replicas:       &n,
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: &one,
		},
		Status: v1alpha1.WebAppStatus{Conditions: []metav1.Condition{{Type: "ReplicaFailure", Status: metav1.ConditionTrue}}},
	}
}

// The hand-written deep copies share no memory with the original.
func TestDeepCopyIsDeep(t *testing.T) {
	orig := sample()
	cp := orig.DeepCopyObject().(*v1alpha1.WebApp)
	require.Equal(t, orig, cp)
	*cp.Spec.Replicas = 9
	cp.Spec.Selector.MatchLabels["app"] = "other"
	*cp.Spec.MaxUnavailable = intstr.FromString("50%")
	cp.Labels["a"] = "changed"
	cp.Status.Conditions[0].Type = "Other"
	assert.Equal(t, sample(), orig, "the original is untouched")

	list := &v1alpha1.WebAppList{Items: []v1alpha1.WebApp{*sample()}}
	lcp := list.DeepCopyObject().(*v1alpha1.WebAppList)
	lcp.Items[0].Labels["a"] = "changed"
	assert.Equal(t, "b", list.Items[0].Labels["a"])
}

// The CRD passes kube-apiserver's own validation of a CRD: a structural
// schema, and CEL rules that compile within the cost budget.
func TestCRDIsValid(t *testing.T) {
	data, err := os.ReadFile("../../config/crd/demo.reconcilekit.dev_webapps.yaml")
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(data, &crd))
	var internal apiextensions.CustomResourceDefinition
	require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &internal, nil))
	internal.Status.StoredVersions = []string{"v1alpha1"} // as the API server sets it on create
	assert.Empty(t, crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal), "the API server would refuse the CRD")
	assert.Equal(t, v1alpha1.GroupVersion.Group, crd.Spec.Group)
}
