package v1alpha1_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	crdcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	admissioncel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
)

const (
	crdFile    = "../../config/crd/demo.reconcilekit.dev_podsets.yaml"
	policyFile = "../../config/admission/owned_label_policy.yaml"
)

func readCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(crdFile)
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(data, &crd))
	return &crd
}

// internalCRD is crd in apiextensions' internal version, which its
// validation and schema packages read.
func internalCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	var out apiextensions.CustomResourceDefinition
	require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &out, nil))
	return &out
}

// The CRD passes kube-apiserver's own validation of a CRD: a structural
// schema, and CEL rules that compile and whose estimated cost is within the
// budget (the API server refuses the CRD otherwise).
func TestCRDIsValid(t *testing.T) {
	crd := internalCRD(t, readCRD(t))
	crd.Status.StoredVersions = []string{"v1alpha1"} // as the API server sets it on create
	errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd)
	assert.Empty(t, errs, "the API server would refuse the CRD")
}

// crdValidator returns the CRD's CEL rules, as the API server runs them on
// a PodSet.
func crdValidator(t *testing.T) *crdcel.Validator {
	t.Helper()
	crd := internalCRD(t, readCRD(t))
	// One version: the internal CRD holds its schema at the top.
	require.NotNil(t, crd.Spec.Validation)
	s, err := schema.NewStructural(crd.Spec.Validation.OpenAPIV3Schema)
	require.NoError(t, err)
	v := crdcel.NewValidator(s, true, celconfig.PerCallLimit)
	require.NotNil(t, v)
	return v
}

// podSetObject is a valid PodSet as the API server hands it to the CEL
// rules, with selector as its spec.selector.
func podSetObject(selector map[string]any) map[string]any {
	labels := map[string]any{"app": "web"}
	return map[string]any{
		"apiVersion": "demo.reconcilekit.dev/v1alpha1",
		"kind":       "PodSet",
		"metadata":   map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": selector,
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

func validate(t *testing.T, v *crdcel.Validator, obj, old map[string]any) field.ErrorList {
	t.Helper()
	var oldObj any
	if old != nil {
		oldObj = old
	}
	errs, _ := v.Validate(context.Background(), nil, nil, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return errs
}

// A PodSet's selector may not mention the label the controller stamps on
// the pods it creates with an owned-only pod cache (v1alpha1.OwnedLabel): a
// selector that excludes it would release every pod created (issue 40).
// The rule names the key; selectors on other keys pass, matchExpressions
// of every operator included.
func TestCRDRefusesASelectorOnTheStamp(t *testing.T) {
	v := crdValidator(t)
	app := map[string]any{"app": "web"}
	for name, sel := range map[string]map[string]any{
		"matchLabels":   {"matchLabels": map[string]any{"app": "web", v1alpha1.OwnedLabel: "true"}},
		"DoesNotExist":  {"matchLabels": app, "matchExpressions": []any{map[string]any{"key": v1alpha1.OwnedLabel, "operator": "DoesNotExist"}}},
		"NotIn":         {"matchLabels": app, "matchExpressions": []any{map[string]any{"key": v1alpha1.OwnedLabel, "operator": "NotIn", "values": []any{"true"}}}},
		"In":            {"matchLabels": app, "matchExpressions": []any{map[string]any{"key": v1alpha1.OwnedLabel, "operator": "In", "values": []any{"true"}}}},
		"Exists, later": {"matchLabels": app, "matchExpressions": []any{map[string]any{"key": "tier", "operator": "Exists"}, map[string]any{"key": v1alpha1.OwnedLabel, "operator": "Exists"}}},
	} {
		t.Run(name, func(t *testing.T) {
			obj := podSetObject(sel)
			// The template carries what matchLabels asks for: only the
			// stamp's rule is at fault.
			obj["spec"].(map[string]any)["template"].(map[string]any)["metadata"] = map[string]any{"labels": sel["matchLabels"]}
			errs := validate(t, v, obj, nil)
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, "spec.selector", errs[0].Field)
			assert.Equal(t, field.ErrorTypeForbidden, errs[0].Type)
			assert.Contains(t, errs[0].Detail, v1alpha1.OwnedLabel, "the message names the key")
		})
	}
	for name, sel := range map[string]map[string]any{
		"matchLabels": {"matchLabels": app},
		"expressions": {"matchLabels": app, "matchExpressions": []any{
			map[string]any{"key": "app", "operator": "In", "values": []any{"web", "other"}},
			map[string]any{"key": "tier", "operator": "NotIn", "values": []any{"db"}},
			map[string]any{"key": "app", "operator": "Exists"},
			map[string]any{"key": "canary", "operator": "DoesNotExist"},
			map[string]any{"key": "demo.reconcilekit.dev/other", "operator": "DoesNotExist"},
		}},
	} {
		t.Run("accepted/"+name, func(t *testing.T) {
			assert.Empty(t, validate(t, v, podSetObject(sel), nil))
		})
	}
}

// A PodSet's selector cannot change, as a ReplicaSet's (apps/v1): a
// transition rule, so a create is free and an update that keeps the
// selector passes.
func TestCRDSelectorIsImmutable(t *testing.T) {
	v := crdValidator(t)
	sel := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	old := podSetObject(sel)
	same := podSetObject(map[string]any{"matchLabels": map[string]any{"app": "web"}})
	same["spec"].(map[string]any)["replicas"] = int64(5)
	assert.Empty(t, validate(t, v, same, old), "an update that keeps the selector")

	for name, changed := range map[string]map[string]any{
		"matchLabels": {"matchLabels": map[string]any{"app": "web", "tier": "x"}},
		"expressions": {"matchLabels": map[string]any{"app": "web"}, "matchExpressions": []any{map[string]any{"key": "tier", "operator": "Exists"}}},
	} {
		t.Run(name, func(t *testing.T) {
			obj := podSetObject(changed)
			obj["spec"].(map[string]any)["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"app": "web", "tier": "x"}}
			errs := validate(t, v, obj, old)
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, "spec.selector", errs[0].Field)
			assert.Contains(t, errs[0].Detail, "selector is immutable")
		})
	}
}

// readPolicy returns the ValidatingAdmissionPolicy and its binding in
// config/admission.
func readPolicy(t *testing.T) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	data, err := os.ReadFile(policyFile)
	require.NoError(t, err)
	docs := strings.Split(string(data), "\n---\n")
	require.Len(t, docs, 2)
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[0]), &policy))
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[1]), &binding))
	return &policy, &binding
}

type expression string

func (e expression) GetExpression() string { return string(e) }

// ReturnTypes is a boolean, as for matchConditions and validations.
func (e expression) ReturnTypes() []*cel.Type { return []*cel.Type{cel.BoolType} }

// admits evaluates the policy on an update of old to pod: whether its
// match conditions select the request, and whether its validations let it
// through. It fails the test when an expression does not compile or
// errors.
func admits(t *testing.T, policy *admissionregistrationv1.ValidatingAdmissionPolicy, old, pod *corev1.Pod) (matched, allowed bool) {
	t.Helper()
	compiler := admissioncel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	eval := func(exprs []admissioncel.ExpressionAccessor) bool {
		t.Helper()
		cond := compiler.CompileCondition(exprs, admissioncel.OptionalVariableDeclarations{}, environment.StoredExpressions)
		require.Empty(t, cond.CompilationErrors())
		gvk := corev1.SchemeGroupVersion.WithKind("Pod")
		attr := admission.NewAttributesRecord(pod, old, gvk, pod.Namespace, pod.Name, corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Update, &metav1.UpdateOptions{}, false, nil)
		versioned := &admission.VersionedAttributes{Attributes: attr, VersionedObject: admission.NewLazyObject(pod), VersionedOldObject: admission.NewLazyObject(old), VersionedKind: gvk}
		results, _, err := cond.ForInput(context.Background(), versioned, nil, admissioncel.OptionalVariableBindings{}, nil, celconfig.RuntimeCELCostBudget)
		require.NoError(t, err)
		all := true
		for _, r := range results {
			require.NoError(t, r.Error, r.ExpressionAccessor.GetExpression())
			all = all && r.EvalResult.Value() == true
		}
		return all
	}
	var conditions, validations []admissioncel.ExpressionAccessor
	for _, c := range policy.Spec.MatchConditions {
		conditions = append(conditions, expression(c.Expression))
	}
	for _, v := range policy.Spec.Validations {
		validations = append(validations, expression(v.Expression))
	}
	if !eval(conditions) {
		return false, true
	}
	return true, eval(validations)
}

// The second line of defence (config/admission): an update that removes
// the stamp from a pod a PodSet controls, or changes its value, is refused;
// other updates of it, and updates of pods no PodSet controls or that never
// carried the stamp, are not the policy's. (The API server also checks
// the expressions' types against the pod schema, which this test does
// not.)
func TestAdmissionPolicyKeepsTheStamp(t *testing.T) {
	policy, binding := readPolicy(t)
	assert.Equal(t, policy.Name, binding.Spec.PolicyName)
	assert.Equal(t, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}, binding.Spec.ValidationActions)
	require.NotNil(t, policy.Spec.MatchConstraints)
	require.Len(t, policy.Spec.MatchConstraints.ResourceRules, 1)
	rule := policy.Spec.MatchConstraints.ResourceRules[0]
	assert.Equal(t, []admissionregistrationv1.OperationType{admissionregistrationv1.Update}, rule.Operations)
	assert.Equal(t, []string{"pods"}, rule.Resources)
	for _, v := range policy.Spec.Validations {
		assert.Contains(t, v.Message, v1alpha1.OwnedLabel, "the message names the key")
	}

	yes := true
	controlled := func(kind, apiVersion string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-x", Namespace: "default", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "web", UID: "u", Controller: &yes}}}}
	}
	stamped := map[string]string{"app": "web", v1alpha1.OwnedLabel: "true"}
	for name, c := range map[string]struct {
		old, pod         *corev1.Pod
		matched, allowed bool
	}{
		"stamp removed": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", stamped),
			controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", map[string]string{"app": "web"}), true, false},
		"all labels removed": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", stamped),
			controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", nil), true, false},
		"stamp changed": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", stamped),
			controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", map[string]string{"app": "web", v1alpha1.OwnedLabel: "false"}), true, false},
		"stamp removed, controller reference too": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", stamped),
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-x", Namespace: "default", Labels: map[string]string{"app": "web"}}}, true, false},
		"another label changed": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", stamped),
			controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", map[string]string{"app": "other", v1alpha1.OwnedLabel: "true"}), true, true},
		"released": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", stamped),
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-x", Namespace: "default", Labels: stamped}}, true, true},
		"a ReplicaSet's pod": {controlled("ReplicaSet", "apps/v1", stamped), controlled("ReplicaSet", "apps/v1", nil), false, true},
		"an orphan": {&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "default", Labels: stamped}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "default"}}, false, true},
		"never stamped": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", map[string]string{"app": "web"}),
			controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", nil), false, true},
		"no labels before": {controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", nil),
			controlled("PodSet", "demo.reconcilekit.dev/v1alpha1", nil), false, true},
	} {
		t.Run(name, func(t *testing.T) {
			matched, allowed := admits(t, policy, c.old, c.pod)
			assert.Equal(t, c.matched, matched, "matched")
			assert.Equal(t, c.allowed, allowed, "allowed")
		})
	}
}
