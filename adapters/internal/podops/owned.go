package podops

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Stamp returns pod with every label of stamp added (docs/rules.md,
// pod itself when stamp is empty, else a shallow copy with a new
// label map, so neither pod nor its labels are modified. A label of stamp
// that pod already carries with another value is an error: the stamp
// would change what the template asks for, and the owner's selector may
// read that key.
func Stamp(pod *corev1.Pod, stamp map[string]string) (*corev1.Pod, error) {
	if len(stamp) == 0 {
		return pod, nil
	}
	for k, v := range stamp {
		if have, ok := pod.Labels[k]; ok && have != v {
			return nil, fmt.Errorf("the pod template sets label %s=%q, the pod control's stamp %s=%q", k, have, k, v)
		}
	}
	p := *pod
	p.Labels = make(map[string]string, len(pod.Labels)+len(stamp))
	maps.Copy(p.Labels, pod.Labels)
	maps.Copy(p.Labels, stamp)
	return &p, nil
}

// Owned is the owned-only pod configuration both adapters' OwnedPods
// hold: the labels the pod client stamps on every pod it creates and the
// selectors of the pod cache, derived from them, so that the two cannot
// disagree. The zero Owned stamps nothing and selects every pod. Its
// fields are read-only once NewOwned returns.
type Owned struct {
	Stamp        map[string]string // nil when empty
	DropFinished bool
	Label        labels.Selector // the stamp's selector; Everything when there is no stamp (nil in the zero Owned)
	Field        fields.Selector // Succeeded and Failed pods left out with DropFinished; Everything otherwise (nil in the zero Owned)
}

// NewOwned returns the Owned of stamp (copied) and dropFinished: the zero
// Owned when stamp is empty and dropFinished false. A stamp that is not a
// valid label set is an error.
func NewOwned(stamp map[string]string, dropFinished bool) (Owned, error) {
	if len(stamp) == 0 && !dropFinished {
		return Owned{}, nil
	}
	sel, fsel, err := Selectors(stamp, dropFinished)
	if err != nil {
		return Owned{}, err
	}
	o := Owned{DropFinished: dropFinished, Label: sel, Field: fsel}
	if len(stamp) > 0 {
		o.Stamp = maps.Clone(stamp)
	}
	return o, nil
}

// Admits reports whether sel, a pod cache's label selector (nil: none),
// keeps a pod carrying the stamp and no other label: only then is every
// pod the pod client creates in the cache, whatever its template's
// labels.
func (o Owned) Admits(sel labels.Selector) bool {
	return sel == nil || sel.Matches(labels.Set(o.Stamp))
}

// ListSelectors returns o's label and field selectors as list options
// carry them: "" for every pod.
func (o Owned) ListSelectors() (label, field string) {
	if o.Label != nil {
		label = o.Label.String()
	}
	if o.Field != nil {
		field = o.Field.String()
	}
	return label, field
}

// Selectors returns the label selector of the pods stamped with stamp
// (Everything when stamp is empty) and, with dropFinished, the field
// selector that leaves out Succeeded and Failed pods (Everything without
// it). A stamp that is not a valid label set is an error.
func Selectors(stamp map[string]string, dropFinished bool) (labels.Selector, fields.Selector, error) {
	sel := labels.Everything()
	if len(stamp) > 0 {
		s, err := labels.ValidatedSelectorFromSet(stamp)
		if err != nil {
			return nil, nil, fmt.Errorf("owned pods' labels: %w", err)
		}
		sel = s
	}
	fsel := fields.Everything()
	if dropFinished {
		fsel = fields.AndSelectors(
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
		)
	}
	return sel, fsel, nil
}
