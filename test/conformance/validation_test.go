package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsv1internal "k8s.io/kubernetes/pkg/apis/apps/v1"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// specFields are the fields Owner.Validate checks; the
// rest of apps/v1's validation is the pod template's own, which the API
// server checks when a pod is created.
func specField(f string) bool {
	switch {
	case f == "spec.replicas", f == "spec.minReadySeconds",
		f == "spec.template", f == "spec.template.spec.restartPolicy", f == "spec.template.spec.activeDeadlineSeconds":
		return true
	}
	return strings.HasPrefix(f, "spec.selector") || strings.HasPrefix(f, "spec.template.metadata.labels") ||
		strings.HasPrefix(f, "spec.template.labels")
}

var (
	selectorKeys   = []string{"app", "tier", "bad key!", "example.com/role"}
	selectorValues = []string{"web", "db", "", "not valid!", "x"}
	selectorOps    = []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn,
		metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist, "Bogus"}
)

// labelsGen draws a label map from the same keys and values as selectors,
// so that selectors match templates often, and fail to as often.
func labelsGen(label string) *rapid.Generator[map[string]string] {
	return rapid.Custom(func(t *rapid.T) map[string]string {
		switch rapid.IntRange(0, 3).Draw(t, label+"Kind") {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		m := map[string]string{}
		for range rapid.IntRange(1, 3).Draw(t, label+"Len") {
			m[rapid.SampledFrom(selectorKeys).Draw(t, label+"Key")] = rapid.SampledFrom(selectorValues).Draw(t, label+"Value")
		}
		return m
	})
}

// selectorGen draws nil, empty, label-only, expression-only and mixed
// selectors, with invalid operators, keys and values among them.
func selectorGen() *rapid.Generator[*metav1.LabelSelector] {
	return rapid.Custom(func(t *rapid.T) *metav1.LabelSelector {
		if rapid.IntRange(0, 5).Draw(t, "selectorNil") == 0 {
			return nil
		}
		s := &metav1.LabelSelector{MatchLabels: labelsGen("matchLabels").Draw(t, "matchLabels")}
		for range rapid.IntRange(0, 2).Draw(t, "expressions") {
			r := metav1.LabelSelectorRequirement{
				Key:      rapid.SampledFrom(selectorKeys).Draw(t, "exprKey"),
				Operator: rapid.SampledFrom(selectorOps).Draw(t, "exprOp"),
			}
			for range rapid.IntRange(0, 2).Draw(t, "exprValues") {
				r.Values = append(r.Values, rapid.SampledFrom(selectorValues).Draw(t, "exprValue"))
			}
			s.MatchExpressions = append(s.MatchExpressions, r)
		}
		return s
	})
}

// validationRSGen draws a ReplicaSet spec over the corners of.
// Its pod spec is otherwise valid (one container with a name and an image),
// so that apps/v1's errors outside those rules are the generator's bugs.
func validationRSGen() *rapid.Generator[*appsv1.ReplicaSet] {
	return rapid.Custom(func(t *rapid.T) *appsv1.ReplicaSet {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "uid-rs"}}
		rs.Spec.Replicas = ptrTo(rapid.SampledFrom([]int32{-2147483648, -1, 0, 1, 3, 2147483647}).Draw(t, "replicas"))
		rs.Spec.MinReadySeconds = rapid.SampledFrom([]int32{-1, 0, 10}).Draw(t, "minReadySeconds")
		rs.Spec.Selector = selectorGen().Draw(t, "selector")
		rs.Spec.Template.Labels = labelsGen("templateLabels").Draw(t, "templateLabels")
		rs.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "img"}}
		rs.Spec.Template.Spec.RestartPolicy = rapid.SampledFrom([]corev1.RestartPolicy{"", corev1.RestartPolicyAlways,
			corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure, "Sometimes"}).Draw(t, "restartPolicy")
		if rapid.Bool().Draw(t, "hasActiveDeadline") {
			rs.Spec.Template.Spec.ActiveDeadlineSeconds = ptrTo(rapid.Int64Range(1, 3600).Draw(t, "activeDeadlineSeconds"))
		}
		return rs
	})
}

// errorSet keeps the field and type of each error on the checked fields,
// once each: apps/v1 reports an unknown restartPolicy twice (the pod's
// rule and the ReplicaSet's), reconcilekit once.
func errorSet(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		if specField(e.Field) {
			out = append(out, e.Field+" "+string(e.Type))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestVsValidateReplicaSetSpec: on random ReplicaSet specs, Owner.Validate
// reports exactly the fields and error types that apps/v1's
// ValidateReplicaSetSpec (after apps/v1 defaulting and conversion, as
// kube-apiserver runs it) reports on the fields it checks,
// so a ReplicaSet apps/v1 accepts is accepted, and one it rejects is
// rejected for the same reasons, a template without labels included
//
func TestVsValidateReplicaSetSpec(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			rs := validationRSGen().Draw(t, "rs")
			owner := reconcile.ReplicaSetOwner(rs)
			ours := owner.Validate()

			defaulted := rs.DeepCopy()
			appsv1internal.SetObjectDefaults_ReplicaSet(defaulted)
			var internal apps.ReplicaSetSpec
			if err := appsv1internal.Convert_v1_ReplicaSetSpec_To_apps_ReplicaSetSpec(&defaulted.Spec, &internal, nil); err != nil {
				t.Fatalf("converting the spec: %v", err)
			}
			theirs := appsvalidation.ValidateReplicaSetSpec(&internal, nil, field.NewPath("spec"), corevalidation.PodValidationOptions{})
			for _, e := range theirs {
				if !specField(e.Field) {
					t.Fatalf("apps/v1 rejects the generated pod template outside the checked fields: %v", e)
				}
			}
			addCases(1)
			want, got := errorSet(theirs), errorSet(ours)
			if !slices.Equal(want, got) {
				t.Fatalf("apps/v1 reports %v, Owner.Validate %v\nspec: %s", want, got, describeSpec(rs))
			}
		})
	})
}

func describeSpec(rs *appsv1.ReplicaSet) string {
	return fmt.Sprintf("replicas %d, minReadySeconds %d, selector %v, template labels %v, restartPolicy %q, activeDeadlineSeconds %v",
		*rs.Spec.Replicas, rs.Spec.MinReadySeconds, rs.Spec.Selector, rs.Spec.Template.Labels,
		rs.Spec.Template.Spec.RestartPolicy, rs.Spec.Template.Spec.ActiveDeadlineSeconds)
}
