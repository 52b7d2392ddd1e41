package status_test

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/status"
)

// FuzzCalculate computes the status of a ReplicaSet decoded from arbitrary
// bytes (nil, any replicas, template labels, minReadySeconds, conditions)
// over decoded pods (nil entries too) and checks that it never panics,
// modifies neither the ReplicaSet nor the pods nor the slices, shares no
// memory with rs, counts as Count does and applies to
// the conditions.
func FuzzCalculate(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := podtest.NewDecoder(data)
		var rs *appsv1.ReplicaSet
		if d.Intn(8) != 0 {
			rs = d.ReplicaSet()
		}
		active, terminating := d.Pods(6, true), d.Pods(4, true)
		manageErr := fuzzError(d)
		now := d.Instant()
		opts := status.Options{DisableTerminatingReplicas: d.Bool()}
		rsBefore := rs.DeepCopy()
		activeBefore, terminatingBefore := deepCopies(active), deepCopies(terminating)

		st := status.Calculate(rs, active, terminating, manageErr, now, opts)

		if !reflect.DeepEqual(rs, rsBefore) || !reflect.DeepEqual(active, activeBefore) || !reflect.DeepEqual(terminating, terminatingBefore) {
			t.Fatal("Calculate modified its input")
		}
		spec := appsv1.ReplicaSetSpec{}
		var old []appsv1.ReplicaSetCondition
		if rs != nil {
			spec, old = rs.Spec, rs.Status.Conditions
			if st.ObservedGeneration != rs.Status.ObservedGeneration {
				t.Fatal("ObservedGeneration not copied (R-8.5)")
			}
		}
		c := status.Count(active, terminating, spec.Template.Labels, spec.MinReadySeconds, now)
		if st.Replicas != c.Replicas || st.FullyLabeledReplicas != c.FullyLabeled || st.ReadyReplicas != c.Ready || st.AvailableReplicas != c.Available {
			t.Fatalf("status %+v disagrees with Count %+v", st, c)
		}
		switch {
		case opts.DisableTerminatingReplicas && st.TerminatingReplicas != nil:
			t.Fatal("TerminatingReplicas set although disabled (R-8.3)")
		case !opts.DisableTerminatingReplicas && (st.TerminatingReplicas == nil || *st.TerminatingReplicas != c.Terminating):
			t.Fatalf("TerminatingReplicas %v, want %d (R-8.3)", st.TerminatingReplicas, c.Terminating)
		}
		checkReplicaFailure(t, conditionTypes(old), conditionTypes(st.Conditions), manageErr)
		if len(st.Conditions) > 0 && len(old) > 0 {
			st.Conditions[0].Message = "changed by the test"
			if !reflect.DeepEqual(rs, rsBefore) {
				t.Fatal("the returned conditions share memory with rs")
			}
		}
	})
}

// FuzzCount counts decoded pods against decoded template labels and
// checks that Count never panics or modifies its input, that
// Available <= Ready <= Replicas and FullyLabeled <= Replicas, that
// Replicas and Terminating are the non-nil pods, and that
// the order of the pods does not matter.
func FuzzCount(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := podtest.NewDecoder(data)
		active, terminating := d.Pods(8, true), d.Pods(4, true)
		labels := d.Labels()
		minReady := int32(d.Intn(8)) - 2
		if d.Intn(8) == 0 {
			minReady = int32(d.Int64())
		}
		now := d.Instant()
		activeBefore, terminatingBefore := deepCopies(active), deepCopies(terminating)
		labelsBefore := maps.Clone(labels)

		c := status.Count(active, terminating, labels, minReady, now)

		if !reflect.DeepEqual(active, activeBefore) || !reflect.DeepEqual(terminating, terminatingBefore) || !reflect.DeepEqual(labels, labelsBefore) {
			t.Fatal("Count modified its input")
		}
		if c.Replicas != nonNil(active) || c.Terminating != nonNil(terminating) {
			t.Fatalf("Count = %+v; want %d replicas and %d terminating", c, nonNil(active), nonNil(terminating))
		}
		if c.Available > c.Ready || c.Ready > c.Replicas || c.FullyLabeled > c.Replicas || c.Available < 0 || c.FullyLabeled < 0 {
			t.Fatalf("inconsistent counts %+v", c)
		}
		reversed := slices.Clone(active)
		slices.Reverse(reversed)
		if r := status.Count(reversed, terminating, labels, minReady, now); r != c {
			t.Fatalf("counts depend on the order of the pods: %+v, reversed %+v", c, r)
		}
	})
}

// FuzzSetReplicaFailure applies to decoded metav1.Condition lists
// and checks that it never panics or modifies conds, that out shares no
// memory with conds, that changed says whether the list changed, and that
// the ReplicaFailure condition is added (reason by the sign of diff),
// kept untouched or removed as the rule says, other conditions keeping
// their order.
func FuzzSetReplicaFailure(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, diff int, generation int64) {
		d := podtest.NewDecoder(data)
		var conds []metav1.Condition
		switch d.Intn(4) {
		case 0:
		case 1:
			conds = []metav1.Condition{}
		default:
			for range d.Intn(5) {
				conds = append(conds, metav1.Condition{
					Type:               d.Pick(status.ReplicaFailure, "Ready", "Other", ""),
					Status:             metav1.ConditionStatus(d.Pick("True", "False", "")),
					Reason:             d.Pick(status.FailedCreate, status.FailedDelete, "", d.Text()),
					Message:            d.Text(),
					ObservedGeneration: int64(d.Intn(4)),
					LastTransitionTime: metav1.NewTime(d.Instant()),
				})
			}
		}
		manageErr := fuzzError(d)
		now := d.Instant()
		before := slices.Clone(conds)

		out, changed := status.SetReplicaFailure(conds, manageErr, diff, generation, now)

		if !reflect.DeepEqual(conds, before) {
			t.Fatal("SetReplicaFailure modified conds")
		}
		had := slices.ContainsFunc(conds, func(c metav1.Condition) bool { return c.Type == status.ReplicaFailure })
		switch {
		case manageErr != nil && !had:
			want := status.ReconcileError
			if diff < 0 {
				want = status.FailedCreate
			} else if diff > 0 {
				want = status.FailedDelete
			}
			last := out[len(out)-1]
			if !changed || len(out) != len(conds)+1 || (len(conds) > 0 && !reflect.DeepEqual(out[:len(conds)], conds)) ||
				last.Type != status.ReplicaFailure || last.Reason != want || last.Message != manageErr.Error() ||
				last.ObservedGeneration != generation || !last.LastTransitionTime.Time.Equal(now) {
				t.Fatalf("want a %s condition (reason %s) appended to %d conditions; got %+v (changed %v)", status.ReplicaFailure, want, len(conds), out, changed)
			}
		case manageErr == nil && had:
			var want []metav1.Condition
			for _, c := range conds {
				if c.Type != status.ReplicaFailure {
					want = append(want, c)
				}
			}
			if !changed || !reflect.DeepEqual(out, want) {
				t.Fatalf("want every %s condition removed: got %+v (changed %v)", status.ReplicaFailure, out, changed)
			}
		default:
			if changed || !reflect.DeepEqual(out, conds) {
				t.Fatalf("want conds unchanged: got %+v (changed %v)", out, changed)
			}
		}
		if len(out) > 0 && len(conds) > 0 {
			out[0].Message = "changed by the test"
			if !reflect.DeepEqual(conds, before) {
				t.Fatal("out shares memory with conds")
			}
		}
	})
}

// fuzzError draws nil or an error with a decoded message.
func fuzzError(d *podtest.Decoder) error {
	if d.Bool() {
		return nil
	}
	return errors.New(d.Text())
}

// checkReplicaFailure checks on the condition types of an apps/v1
// list before and after Calculate.
func checkReplicaFailure(t *testing.T, before, after []string, manageErr error) {
	t.Helper()
	var others []string
	had := false
	for _, typ := range before {
		if typ == status.ReplicaFailure {
			had = true
			continue
		}
		others = append(others, typ)
	}
	switch {
	case manageErr == nil:
		if !slices.Equal(after, others) {
			t.Fatalf("no error: want %v, got %v (R-8.4)", others, after)
		}
	case had:
		if !slices.Equal(after, before) {
			t.Fatalf("error and a condition present: want %v kept, got %v (R-8.4)", before, after)
		}
	default:
		if !slices.Equal(after, append(slices.Clone(before), status.ReplicaFailure)) {
			t.Fatalf("error and no condition: want %v plus %s, got %v (R-8.4)", before, status.ReplicaFailure, after)
		}
	}
}

func conditionTypes(conds []appsv1.ReplicaSetCondition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, string(c.Type))
	}
	return out
}

func deepCopies(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func nonNil(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if p != nil {
			n++
		}
	}
	return n
}
