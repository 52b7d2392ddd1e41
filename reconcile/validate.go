package reconcile

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/reconcilekit/reconcilekit/status"
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
// checks a ReplicaSet's, with the same field paths under "spec"
// (docs/rules.md §14): replicas and minReadySeconds not negative; a
// selector present, valid and not empty; a template present, whose labels
// are valid and matched by the selector, whose restartPolicy is Always or
// unset, and that sets no activeDeadlineSeconds. As apps/v1, a template
// without labels is accepted when the selector matches empty labels (only
// NotIn and DoesNotExist terms). The messages are apps/v1's, except that
// they name Owner.Kind's kind where apps/v1 says "deployment" or
// "ReplicaSet" (unchanged for a ReplicaSet). It reads Replicas,
// MinReadySeconds, Selector, Template and Kind only (not the pod spec,
// which the API server checks on create), returns nil when the spec is
// valid and never modifies o.
//
// [Controller.Sync] runs it on every owner, and also checks the selector
// against the template's labels together with the labels its pod client
// stamps on every pod it creates ([PodStamper], R-14.3); why:
// docs/design/owner-validation.md.
func (o *Owner) Validate() field.ErrorList {
	return o.validateSpec(nil)
}

// validateSpec is [Owner.Validate] with the selector checked against the
// template's labels together with stamp, the labels the pod client adds.
func (o *Owner) validateSpec(stamp map[string]string) field.ErrorList {
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
			// apps/v1's message names "deployment" for every kind.
			errs = append(errs, field.Invalid(selPath, o.Selector, "empty selector is invalid for "+o.kindWord("deployment")))
		}
	}
	// A nil selector converts to one that matches nothing, so the template
	// is still checked, and reported as not matching, as apps/v1 does.
	selector, err := metav1.LabelSelectorAsSelector(o.Selector)
	if err != nil {
		// Without a selector the template cannot be checked against it.
		return append(errs, field.Invalid(selPath, o.Selector, "invalid label selector"))
	}
	return append(errs, o.validateTemplateAgainst(selector, stamp)...)
}

// kindWord is the word a message uses for the owner's kind: apps/v1's own
// word for a ReplicaSet (or an Owner without a Kind), the kind otherwise.
func (o *Owner) kindWord(appsWord string) string {
	if k := o.Kind.Kind; k != "" && k != replicaSetKind.Kind {
		return k
	}
	return appsWord
}

// validateTemplateAgainst is the template half of [Owner.Validate]: the
// template's labels, with stamp, must be matched by selector.
func (o *Owner) validateTemplateAgainst(selector labels.Selector, stamp map[string]string) field.ErrorList {
	t := o.Template
	path := specPath.Child("template")
	if t == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	labelsPath := path.Child("metadata", "labels")
	if conflict := stampConflict(t.Labels, stamp); conflict != "" {
		errs = append(errs, field.Invalid(labelsPath.Key(conflict), t.Labels[conflict],
			fmt.Sprintf("the pod client stamps %s=%s on every pod it creates; the template must not set another value", conflict, stamp[conflict])))
	}
	switch {
	case selector.Empty():
		// apps/v1 skips the check for an empty selector, which is
		// reported above.
	case !selector.Matches(labels.Set(t.Labels)):
		errs = append(errs, field.Invalid(labelsPath, t.Labels, "`selector` does not match template `labels`"))
	case len(stamp) > 0 && !selector.Matches(labels.Set(withStamp(t.Labels, stamp))):
		errs = append(errs, field.Invalid(labelsPath, t.Labels,
			fmt.Sprintf("`selector` does not match template `labels` with the labels the pod client stamps on every pod (%s): every pod created would be released and created again", labels.Set(stamp))))
	}
	// apps/v1 reports invalid template labels at spec.template.labels (its
	// pod template rule), and the selector mismatch at
	// spec.template.metadata.labels; so does Validate.
	errs = append(errs, metav1validation.ValidateLabels(t.Labels, path.Child("labels"))...)
	errs = append(errs, o.validatePodTemplateSpec()...)
	return errs
}

// withStamp returns a new label set: m with every label of stamp added.
func withStamp(m, stamp map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(stamp))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range stamp {
		out[k] = v
	}
	return out
}

// stampConflict returns the smallest key that m sets to another value than
// stamp does, "" when none.
func stampConflict(m, stamp map[string]string) string {
	conflict := ""
	for k, v := range stamp {
		if have, ok := m[k]; ok && have != v && (conflict == "" || k < conflict) {
			conflict = k
		}
	}
	return conflict
}

// validatePodTemplateSpec checks what apps/v1 forbids in the pod spec of a
// ReplicaSet's template: pods that may finish. ManageReplicas checks it
// too, before it creates pods.
func (o *Owner) validatePodTemplateSpec() field.ErrorList {
	t := o.Template
	path := specPath.Child("template", "spec")
	var errs field.ErrorList
	// An unset policy is defaulted to Always when the pod is created.
	if p := t.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), p, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(path.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in "+o.kindWord("ReplicaSet")+" is not Supported"))
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

// ConditionReason names an invalid spec in the failure condition
// (package status reads it).
func (e *specError) ConditionReason() string { return status.InvalidSpec }

// Unwrap returns the failures, so that errors.As finds each *field.Error.
func (e *specError) Unwrap() []error {
	out := make([]error, len(e.errs))
	for i, fe := range e.errs {
		out[i] = fe
	}
	return out
}
