package status_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/status"
)

func TestNeedsUpdate(t *testing.T) {
	base := func() *appsv1.ReplicaSet {
		rs := replicaSet(3, 0, otherCond("A"), failureCond(status.FailedCreate, "boom", t0))
		rs.Generation = 5
		rs.Status = appsv1.ReplicaSetStatus{
			Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1,
			TerminatingReplicas: ptr(int32(0)), ObservedGeneration: 5,
			Conditions: rs.Status.Conditions,
		}
		return rs
	}
	cases := []struct {
		name   string
		rs     func(*appsv1.ReplicaSet)       // changes to the stored ReplicaSet
		status func(*appsv1.ReplicaSetStatus) // changes to the new status
		want   bool
	}{
		{name: "R-8.6 identical status and observed generation skip the write", want: false},
		{name: "R-8.6 replicas differ", status: func(s *appsv1.ReplicaSetStatus) { s.Replicas++ }, want: true},
		{name: "R-8.6 fullyLabeledReplicas differ", status: func(s *appsv1.ReplicaSetStatus) { s.FullyLabeledReplicas++ }, want: true},
		{name: "R-8.6 readyReplicas differ", status: func(s *appsv1.ReplicaSetStatus) { s.ReadyReplicas++ }, want: true},
		{name: "R-8.6 availableReplicas differ", status: func(s *appsv1.ReplicaSetStatus) { s.AvailableReplicas++ }, want: true},
		{name: "R-8.6 terminating nil vs pointer to 0 writes",
			status: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = nil }, want: true},
		{name: "R-8.6 terminating pointer to 0 vs nil writes",
			rs: func(rs *appsv1.ReplicaSet) { rs.Status.TerminatingReplicas = nil }, want: true},
		{name: "R-8.6 terminating both nil skips",
			rs:     func(rs *appsv1.ReplicaSet) { rs.Status.TerminatingReplicas = nil },
			status: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = nil }, want: false},
		{name: "R-8.6 a different pointer to an equal value skips",
			status: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = ptr(int32(0)) }, want: false},
		{name: "R-8.6 different terminating values write",
			status: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = ptr(int32(1)) }, want: true},
		{name: "R-8.6 generation != observedGeneration writes",
			rs: func(rs *appsv1.ReplicaSet) { rs.Generation = 6 }, want: true},
		{name: "R-8.6 newStatus.observedGeneration is not compared",
			status: func(s *appsv1.ReplicaSetStatus) { s.ObservedGeneration = 42 }, want: false},
		{name: "R-8.6 conditions in another backing array but equal skip",
			status: func(s *appsv1.ReplicaSetStatus) {
				s.Conditions = append([]appsv1.ReplicaSetCondition(nil), s.Conditions...)
			}, want: false},
		{name: "R-8.6 a condition's message differs",
			status: func(s *appsv1.ReplicaSetStatus) { s.Conditions[1].Message = "other" }, want: true},
		{name: "R-8.6 a condition's transition time differs",
			status: func(s *appsv1.ReplicaSetStatus) { s.Conditions[1].LastTransitionTime = metav1.NewTime(now) }, want: true},
		{name: "R-8.6 condition order differs",
			status: func(s *appsv1.ReplicaSetStatus) { s.Conditions[0], s.Conditions[1] = s.Conditions[1], s.Conditions[0] }, want: true},
		{name: "R-8.6 nil vs empty conditions differ",
			rs:     func(rs *appsv1.ReplicaSet) { rs.Status.Conditions = nil },
			status: func(s *appsv1.ReplicaSetStatus) { s.Conditions = []appsv1.ReplicaSetCondition{} }, want: true},
		{name: "R-8.6 both nil conditions skip",
			rs:     func(rs *appsv1.ReplicaSet) { rs.Status.Conditions = nil },
			status: func(s *appsv1.ReplicaSetStatus) { s.Conditions = nil }, want: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := base()
			st := *rs.Status.DeepCopy()
			if c.rs != nil {
				c.rs(rs)
			}
			if c.status != nil {
				c.status(&st)
			}
			before, stBefore := rs.DeepCopy(), st.DeepCopy()
			assert.Equal(t, c.want, status.NeedsUpdate(rs, st))
			assert.Equal(t, before, rs, "rs not modified")
			assert.Equal(t, *stBefore, st)
		})
	}
}

func TestNeedsUpdateNilReplicaSet(t *testing.T) {
	assert.False(t, status.NeedsUpdate(nil, appsv1.ReplicaSetStatus{}), "nil rs is an empty ReplicaSet")
	assert.True(t, status.NeedsUpdate(nil, appsv1.ReplicaSetStatus{TerminatingReplicas: ptr(int32(0))}))
}

func TestForWrite(t *testing.T) {
	t.Run("R-8.7 observedGeneration is the generation acted on", func(t *testing.T) {
		rs := replicaSet(1, 0)
		rs.Generation = 7
		got := status.ForWrite(rs, appsv1.ReplicaSetStatus{Replicas: 1, ObservedGeneration: 3})
		assert.Equal(t, appsv1.ReplicaSetStatus{Replicas: 1, ObservedGeneration: 7}, got)
		assert.Equal(t, int64(2), rs.Status.ObservedGeneration, "R-8.7 deviation: rs is not modified")
	})
	t.Run("the result shares no memory with newStatus", func(t *testing.T) {
		in := appsv1.ReplicaSetStatus{TerminatingReplicas: ptr(int32(2)), Conditions: []appsv1.ReplicaSetCondition{otherCond("A")}}
		before := *in.DeepCopy()
		got := status.ForWrite(replicaSet(1, 0), in)
		require.NotNil(t, got.TerminatingReplicas)
		*got.TerminatingReplicas = 9
		got.Conditions[0].Reason = "Changed"
		assert.Equal(t, before, in)
	})
	t.Run("nil and empty conditions keep their form", func(t *testing.T) {
		assert.Nil(t, status.ForWrite(replicaSet(1, 0), appsv1.ReplicaSetStatus{}).Conditions)
		got := status.ForWrite(replicaSet(1, 0), appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{}})
		assert.NotNil(t, got.Conditions)
		assert.Empty(t, got.Conditions)
	})
	t.Run("a nil ReplicaSet is generation 0", func(t *testing.T) {
		assert.Zero(t, status.ForWrite(nil, appsv1.ReplicaSetStatus{ObservedGeneration: 4}).ObservedGeneration)
	})
}

// a ReplicaSet already carrying s needs no write for s when its
// generation was observed, and needs one when it was not. After a write of
// ForWrite's result no further write is needed.
func TestNeedsUpdateProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := statusGen(true).Draw(t, "status")
		rs := replicaSet(1, 0)
		rs.Status = *s.DeepCopy()
		rs.Generation = s.ObservedGeneration
		assert.False(t, status.NeedsUpdate(rs, s), "generation == observedGeneration")

		rs.Generation = s.ObservedGeneration + int64(rapid.IntRange(1, 3).Draw(t, "newer"))
		assert.True(t, status.NeedsUpdate(rs, s), "generation != observedGeneration")

		written := rs.DeepCopy()
		written.Status = status.ForWrite(rs, s)
		assert.False(t, status.NeedsUpdate(written, s), "after the write")
	})
}
