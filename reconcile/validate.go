package reconcile

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrInvalidSpec marks the error of a [Controller.Sync] whose owner fails
// [Owner.Validate]: errors.Is(err, ErrInvalidSpec) holds, and so does
// errors.Is(err, ErrTerminal). The sync touched no pod and wrote the
// owner's status with the error as SyncResult.ManageErr, so the failure
// condition says what is wrong.
var ErrInvalidSpec = errors.New("reconcile: invalid owner spec")

// specPath is the root of the field paths [Owner.Validate] reports: the
// spec of a ReplicaSet, and of a custom resource shaped like one.
var specPath = field.NewPath("spec")

// Validate checks the owner's spec as kube-apiserver's apps/v1 validation
// checks a ReplicaSet's, with the same messages and field paths under
// "spec" (docs/rules.md §14): replicas and minReadySeconds not negative; a
// selector present, valid and not empty; a template present, whose labels
// are valid and matched by the selector, whose restartPolicy is Always or
// unset, and that sets no activeDeadlineSeconds. Beyond apps/v1, the
// template must carry a label. It reads Replicas, MinReadySeconds,
// Selector and Template only (not the pod spec, which the API server checks
// on create), returns nil when the spec is valid and never modifies o.
// [Controller.Sync] runs it on every owner; why, and why the extra label
// rule: docs/design/owner-validation.md.
func (o *Owner) Validate() field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(o.Replicas), specPath.Child("replicas"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(o.MinReadySeconds), specPath.Child("minReadySeconds"))...)

	selPath := specPath.Child("selector")
	if o.Selector == nil {
		errs = append(errs, field.Required(selPath, ""))
	} else {
		opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}
		errs = append(errs, metav1validation.ValidateLabelSelector(o.Selector, opts, selPath)...)
		if len(o.Selector.MatchLabels)+len(o.Selector.MatchExpressions) == 0 {
			// apps/v1's message, word for word, deployment and all.
			errs = append(errs, field.Invalid(selPath, o.Selector, "empty selector is invalid for deployment"))
		}
	}
	// A nil selector converts to one that matches nothing, so the template
	// is still checked, and reported as not matching, as apps/v1 does.
	selector, err := metav1.LabelSelectorAsSelector(o.Selector)
	if err != nil {
		// Without a selector the template cannot be checked against it.
		return append(errs, field.Invalid(selPath, o.Selector, "invalid label selector"))
	}
	return append(errs, validateTemplate(o.Template, selector)...)
}

// validateTemplate is the template half of [Owner.Validate].
func validateTemplate(t *corev1.PodTemplateSpec, selector labels.Selector) field.ErrorList {
	path := specPath.Child("template")
	if t == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	labelsPath := path.Child("metadata", "labels")
	if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(labelsPath, t.Labels, "`selector` does not match template `labels`"))
	}
	// apps/v1 reports invalid template labels at spec.template.labels (its
	// pod template rule), and the selector mismatch at
	// spec.template.metadata.labels; so does Validate.
	errs = append(errs, metav1validation.ValidateLabels(t.Labels, path.Child("labels"))...)
	if len(t.Labels) == 0 {
		errs = append(errs, field.Required(labelsPath, "a pod template without labels is not supported"))
	}
	errs = append(errs, validatePodTemplateSpec(t)...)
	return errs
}

// validatePodTemplateSpec checks what apps/v1 forbids in the pod spec of a
// ReplicaSet's template: pods that may finish. ManageReplicas checks it
// too, before it creates pods.
func validatePodTemplateSpec(t *corev1.PodTemplateSpec) field.ErrorList {
	path := specPath.Child("template", "spec")
	var errs field.ErrorList
	// An unset policy is defaulted to Always when the pod is created.
	if p := t.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), p, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(path.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicaSet is not Supported"))
	}
	return errs
}

// specError is the error of an owner that fails [Owner.Validate]: it
// names the owner once and lists every failure with its field path.
type specError struct {
	key  string
	errs field.ErrorList
}

func (e *specError) Error() string {
	return "reconcile: owner " + e.key + ": invalid spec: " + e.errs.ToAggregate().Error()
}

// Is makes errors.Is(err, ErrInvalidSpec) and errors.Is(err, ErrTerminal)
// hold.
func (e *specError) Is(target error) bool { return target == ErrInvalidSpec || target == ErrTerminal }

// Unwrap returns the failures, so that errors.As finds each *field.Error.
func (e *specError) Unwrap() []error {
	out := make([]error, len(e.errs))
	for i, fe := range e.errs {
		out[i] = fe
	}
	return out
}
