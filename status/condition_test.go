package status_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/status"
)

func TestConstants(t *testing.T) {
	// the type also matches the apps/v1 constant.
	assert.Equal(t, "ReplicaFailure", status.ReplicaFailure)
	assert.Equal(t, string(appsv1.ReplicaSetReplicaFailure), status.ReplicaFailure)
	assert.Equal(t, "FailedCreate", status.FailedCreate)
	assert.Equal(t, "FailedDelete", status.FailedDelete)
	// the reasons beyond upstream's.
	assert.Equal(t, "ReconcileError", status.ReconcileError)
	assert.Equal(t, "InvalidSpec", status.InvalidSpec)
	assert.Equal(t, "CreatedPodsNotSelected", status.CreatedPodsNotSelected)
	assert.Equal(t, "CreatedPodsNotObserved", status.CreatedPodsNotObserved)
}

func crdCond(typ, reason string, gen int64, at time.Time) metav1.Condition {
	return metav1.Condition{
		Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: "m",
		ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(at),
	}
}

func TestSetReplicaFailure(t *testing.T) {
	ready := crdCond("Ready", "AllGood", 1, t0)
	progressing := crdCond("Progressing", "Scaling", 1, t0)
	old := crdCond(status.ReplicaFailure, status.FailedDelete, 1, t0)
	added := func(reason string) metav1.Condition {
		return metav1.Condition{
			Type: status.ReplicaFailure, Status: metav1.ConditionTrue, Reason: reason, Message: errSync.Error(),
			ObservedGeneration: 4, LastTransitionTime: metav1.NewTime(now),
		}
	}
	cases := []struct {
		name    string
		conds   []metav1.Condition
		err     error
		diff    int
		want    []metav1.Condition
		changed bool
	}{
		{name: "R-8.4 error with too few pods adds FailedCreate", err: errSync, diff: -2,
			want: []metav1.Condition{added(status.FailedCreate)}, changed: true},
		{name: "R-8.4 error with too many pods adds FailedDelete", err: errSync, diff: 1,
			want: []metav1.Condition{added(status.FailedDelete)}, changed: true},
		{name: "R-8.4 error with matching counts adds ReconcileError (CRD deviation from \"\")", err: errSync,
			want: []metav1.Condition{added(status.ReconcileError)}, changed: true},
		{name: "R-8.4 a new condition goes last, others keep their order",
			conds: []metav1.Condition{progressing, ready}, err: errSync, diff: -1,
			want: []metav1.Condition{progressing, ready, added(status.FailedCreate)}, changed: true},
		{name: "R-8.4 an existing condition is kept untouched, even reason and generation",
			conds: []metav1.Condition{old, ready}, err: errSync, diff: -1,
			want: []metav1.Condition{old, ready}},
		{name: "R-8.4 no error removes the last condition: nil",
			conds: []metav1.Condition{old}, changed: true},
		{name: "R-8.4 no error removes every ReplicaFailure, others keep their order",
			conds: []metav1.Condition{ready, old, progressing, old},
			want:  []metav1.Condition{ready, progressing}, changed: true},
		{name: "R-8.4 neither keeps nil", want: nil},
		{name: "R-8.4 neither keeps empty", conds: []metav1.Condition{}, want: []metav1.Condition{}},
		{name: "R-8.4 neither keeps the list", conds: []metav1.Condition{ready, progressing},
			want: []metav1.Condition{ready, progressing}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.conds)
			out, changed := status.SetReplicaFailure(c.conds, c.err, c.diff, 4, now)
			assert.Equal(t, c.want, out)
			assert.Equal(t, c.changed, changed)
			assert.Equal(t, before, c.conds, "input not modified")
			if len(out) > 0 && len(c.conds) > 0 {
				assert.NotSame(t, &c.conds[0], &out[0], "out never aliases the input")
			}
		})
	}
}

// The transition time is always now, never the wall clock: a zero now stays
// zero (meta.SetStatusCondition would stamp time.Now()).
func TestSetReplicaFailureZeroNow(t *testing.T) {
	out, changed := status.SetReplicaFailure(nil, errSync, 0, 1, time.Time{})
	require.True(t, changed)
	require.Len(t, out, 1)
	assert.True(t, out[0].LastTransitionTime.IsZero())
}

// Appending must never write into spare capacity of the caller's array, for
// either flavour of conditions.
func TestSpareCapacityIsNotWritten(t *testing.T) {
	crd := make([]metav1.Condition, 1, 4)
	crd[0] = crdCond("Ready", "AllGood", 1, t0)
	out, _ := status.SetReplicaFailure(crd, errSync, -1, 1, now)
	require.Len(t, out, 2)
	assert.Zero(t, crd[:2][1], "CRD: caller's spare capacity untouched")

	apps := make([]appsv1.ReplicaSetCondition, 1, 4)
	apps[0] = otherCond("A")
	rs := replicaSet(2, 0, apps...)
	st := status.Calculate(rs, nil, nil, errSync, now, status.Options{})
	require.Len(t, st.Conditions, 2)
	assert.Zero(t, apps[:2][1], "apps/v1: caller's spare capacity untouched")
}

// for CRDs: given no ReplicaFailure before, it is present afterwards
// iff there was an error; changed says exactly whether the list differs; the
// added condition passes metav1.Condition validation for every diff; the
// input is never modified; applying it twice changes nothing the second time.
func TestSetReplicaFailureProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		types := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"Ready", "Progressing", "Degraded", status.ReplicaFailure}), 0, 4, rapid.ID).Draw(t, "types")
		var conds []metav1.Condition
		if rapid.Bool().Draw(t, "nonNil") {
			conds = []metav1.Condition{}
		}
		for _, typ := range types {
			conds = append(conds, crdCond(typ, "Some", 1, t0))
		}
		had := false
		for _, c := range conds {
			had = had || c.Type == status.ReplicaFailure
		}
		var err error
		if rapid.Bool().Draw(t, "failed") {
			err = errSync
		}
		diff := rapid.IntRange(-3, 3).Draw(t, "diff")
		before := slices.Clone(conds)

		out, changed := status.SetReplicaFailure(conds, err, diff, 2, now)

		assert.Equal(t, before, conds, "input not modified")
		assert.Equal(t, (err != nil) != had, changed)
		assert.Equal(t, !changed, assert.ObjectsAreEqual(conds, out))
		found := false
		for _, c := range out {
			found = found || c.Type == status.ReplicaFailure
		}
		if !had {
			assert.Equal(t, err != nil, found)
		}
		assert.Empty(t, validation.ValidateConditions(out, field.NewPath("status", "conditions")))

		again, changedAgain := status.SetReplicaFailure(out, err, diff, 2, now)
		assert.False(t, changedAgain)
		assert.Equal(t, out, again)
	})
}
