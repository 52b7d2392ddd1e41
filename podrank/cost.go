package podrank

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// DeletionCostAnnotation is the pod annotation whose value, an int32, makes
// a pod cheaper (lower) or dearer (higher) to delete.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// ParseDeletionCost reads a pod-deletion-cost annotation value as upstream
// does. The value must be exactly "0", or start with '-' or a
// digit 1–9, and must then be a base-10 32-bit signed integer. So "+10" and
// "007" are rejected, "-007" is −7, "-0" is 0 and "2147483648" is out of
// range. An invalid value yields 0 and an error prefixed "podrank: "; a
// value that starts well but is not an int32 wraps strconv's error
// (strconv.ErrSyntax or strconv.ErrRange).
//
// The ranking itself ([Compare], [ForDeletion]) treats an invalid value as 0
// and does not report the error.
func ParseDeletionCost(value string) (int32, error) {
	if !validCostStart(value) {
		return 0, fmt.Errorf("podrank: invalid deletion cost %q: must be \"0\" or start with '-' or a digit 1-9", value)
	}
	v, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("podrank: invalid deletion cost: %w", err)
	}
	return int32(v), nil
}

// DeletionCost returns the deletion cost of p: 0 without the annotation
// (and for a nil pod), otherwise [ParseDeletionCost] of its value.
func DeletionCost(p *corev1.Pod) (int32, error) {
	if p == nil {
		return 0, nil
	}
	v, ok := p.Annotations[DeletionCostAnnotation]
	if !ok {
		return 0, nil
	}
	return ParseDeletionCost(v)
}

// validCostStart is R-6.13's first-character rule: "+5" and "007" are out.
func validCostStart(s string) bool {
	if s == "" {
		return false
	}
	return s == "0" || s[0] == '-' || ('1' <= s[0] && s[0] <= '9')
}
