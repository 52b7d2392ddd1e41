package conformance

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/status"
)

// replicaSetGen draws a ReplicaSet whose status and conditions reach the
// corners of: an existing ReplicaFailure (also twice),
// other conditions, nil and empty condition lists, nil and non-nil
// terminating counts, generation equal to observedGeneration or not.
func replicaSetGen(s podSpec) *rapid.Generator[*appsv1.ReplicaSet] {
	return rapid.Custom(func(t *rapid.T) *appsv1.ReplicaSet {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: s.ownerUID,
			Generation: int64(rapid.IntRange(0, 2).Draw(t, "generation"))}}
		rs.Spec.Replicas = ptrTo(int32(rapid.IntRange(0, 8).Draw(t, "replicas")))
		rs.Spec.MinReadySeconds = s.minReady
		rs.Spec.Template.Labels = rapid.SampledFrom([]map[string]string{nil, {"app": "web"}, {"app": "web", "tier": "x"}}).Draw(t, "templateLabels")
		small := rapid.Int32Range(0, 8)
		rs.Status.Replicas = small.Draw(t, "statusReplicas")
		rs.Status.FullyLabeledReplicas = small.Draw(t, "statusFullyLabeled")
		rs.Status.ReadyReplicas = small.Draw(t, "statusReady")
		rs.Status.AvailableReplicas = small.Draw(t, "statusAvailable")
		if rapid.Bool().Draw(t, "hasTerminating") {
			rs.Status.TerminatingReplicas = ptrTo(small.Draw(t, "statusTerminating"))
		}
		rs.Status.ObservedGeneration = int64(rapid.IntRange(0, 2).Draw(t, "observedGeneration"))
		switch n := rapid.IntRange(-1, 3).Draw(t, "conditions"); n {
		case -1:
		default:
			rs.Status.Conditions = []appsv1.ReplicaSetCondition{}
			for i := 0; i < n; i++ {
				rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
					Type:               rapid.SampledFrom([]appsv1.ReplicaSetConditionType{appsv1.ReplicaSetReplicaFailure, "Other"}).Draw(t, "condType"),
					Status:             rapid.SampledFrom([]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse}).Draw(t, "condStatus"),
					Reason:             rapid.SampledFrom([]string{"", "FailedCreate", "FailedDelete"}).Draw(t, "condReason"),
					Message:            rapid.SampledFrom([]string{"", "boom"}).Draw(t, "condMessage"),
					LastTransitionTime: metav1.NewTime(base.Add(-time.Duration(rapid.IntRange(0, 2).Draw(t, "condAge")) * time.Minute)),
				})
			}
		}
		return rs
	})
}

var manageErrs = []error{nil, nil, errors.New("boom"), errors.New("unable to delete pods: gone")}

// TestCalculateMatchesCalculateStatus: status.Calculate equals upstream's
// calculateStatus field by field, with terminating replicas reported and
// not, except the LastTransitionTime of a ReplicaFailure condition it adds
// (excConditionTime: now, where upstream reads the wall clock).
func TestCalculateMatchesCalculateStatus(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			if s.now.IsZero() {
				s.now = base
			}
			rs := replicaSetGen(s).Draw(t, "rs")
			active := podsGen(s, 0, 8).Draw(t, "active")
			terminating := podsGen(s, 0, 3).Draw(t, "terminating")
			manageErr := rapid.SampledFrom(manageErrs).Draw(t, "manageErr")
			report := rapid.Bool().Draw(t, "reportTerminating")

			got := status.Calculate(rs, active, terminating, manageErr, s.now, status.Options{DisableTerminatingReplicas: !report})
			want := upstreamCalculateStatus(rs.DeepCopy(), active, terminating, manageErr,
				replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: report}, s.now)
			addCases(1)
			if len(got.Conditions) == len(want.Conditions) {
				for i := range got.Conditions {
					g, w := &got.Conditions[i], &want.Conditions[i]
					if g.Type == appsv1.ReplicaSetReplicaFailure && !g.LastTransitionTime.Equal(&w.LastTransitionTime) && g.LastTransitionTime.Time.Equal(s.now) {
						noteDocumented(excConditionTime)
						w.LastTransitionTime = g.LastTransitionTime
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Calculate = %+v\nupstream calculateStatus = %+v", got, want)
			}
		})
	})
}

// recordingRSClient is an apps/v1 ReplicaSet client whose UpdateStatus and
// Get record the call and succeed or fail as told; every other method is
// unimplemented (nil embedded interface).
type recordingRSClient struct {
	appsclient.ReplicaSetInterface
	updates   []*appsv1.ReplicaSet
	gets      int
	updateErr []error
}

func (c *recordingRSClient) UpdateStatus(_ context.Context, rs *appsv1.ReplicaSet, _ metav1.UpdateOptions) (*appsv1.ReplicaSet, error) {
	c.updates = append(c.updates, rs.DeepCopy())
	if i := len(c.updates) - 1; i < len(c.updateErr) && c.updateErr[i] != nil {
		return nil, c.updateErr[i]
	}
	return rs.DeepCopy(), nil
}

func (c *recordingRSClient) Get(_ context.Context, name string, _ metav1.GetOptions) (*appsv1.ReplicaSet, error) {
	c.gets++
	fresh := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 9}}
	fresh.Spec.Replicas = ptrTo(int32(1))
	return fresh, nil
}

// TestNeedsUpdateMatchesUpdateReplicaSetStatus: status.NeedsUpdate is false
// exactly when upstream's updateReplicaSetStatus makes no API call,
// and status.ForWrite is the status upstream sends, also on its retry.
func TestNeedsUpdateMatchesUpdateReplicaSetStatus(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			rs := replicaSetGen(s).Draw(t, "rs")
			next := *rs.Status.DeepCopy()
			// Nudge some fields of the current status, or none.
			if rapid.Bool().Draw(t, "fromCalculate") {
				if s.now.IsZero() {
					s.now = base
				}
				next = status.Calculate(rs, podsGen(s, 0, 5).Draw(t, "active"), nil,
					rapid.SampledFrom(manageErrs).Draw(t, "manageErr"), s.now, status.Options{DisableTerminatingReplicas: rapid.Bool().Draw(t, "noTerm")})
			} else {
				switch rapid.IntRange(0, 8).Draw(t, "nudge") {
				case 0:
					next.Replicas++
				case 1:
					next.AvailableReplicas++
				case 2:
					next.TerminatingReplicas = nil
				case 3:
					next.TerminatingReplicas = ptrTo(int32(0))
				case 4:
					if next.Conditions == nil {
						next.Conditions = []appsv1.ReplicaSetCondition{}
					} else if len(next.Conditions) == 0 {
						next.Conditions = nil
					}
				case 5:
					next.ObservedGeneration += 3
				case 6:
					if next.TerminatingReplicas != nil {
						next.TerminatingReplicas = ptrTo(*next.TerminatingReplicas)
					}
				}
			}
			fail := rapid.IntRange(0, 2).Draw(t, "updateFailures")
			c := &recordingRSClient{}
			for i := 0; i < fail; i++ {
				c.updateErr = append(c.updateErr, errors.New("conflict"))
			}
			before := rs.DeepCopy()
			need := status.NeedsUpdate(rs, next)
			forWrite := status.ForWrite(rs, next)
			_, err := upstreamUpdateReplicaSetStatus(logr.Discard(), c, rs.DeepCopy(), *next.DeepCopy(), replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: true})
			addCases(1)
			if !reflect.DeepEqual(rs, before) {
				t.Fatalf("NeedsUpdate or ForWrite modified rs")
			}
			if need != (len(c.updates) > 0) {
				t.Fatalf("NeedsUpdate = %v, upstream made %d UpdateStatus calls\nrs.Status %+v gen %d\nnew %+v", need, len(c.updates), rs.Status, rs.Generation, next)
			}
			for i, u := range c.updates {
				if !reflect.DeepEqual(u.Status, forWrite) {
					t.Fatalf("update %d: upstream wrote %+v, ForWrite %+v", i, u.Status, forWrite)
				}
			}
			if need && (err != nil) != (fail == 2) {
				t.Fatalf("harness: %d failures gave err %v", fail, err)
			}
		})
	})
}

// TestRequeueAfterMatchesSyncReplicaSet: status.RequeueAfter gives the
// availability requeue of syncReplicaSet after a successful sync:
// none unless minReadySeconds > 0 and ready != available in the written
// status, else controller.FindMinNextPodAvailabilityCheck (chosen with the
// status's now, refined with a later clock reading) or the minReadySeconds
// fallback. The counts come from upstream's calculateStatus at now. The
// gate around FindMinNextPodAvailabilityCheck is inline in syncReplicaSet
// and restated here, to reach every corner cheaply;
// TestRequeueMatchesSyncReplicaSetItself drives the real syncReplicaSet.
func TestRequeueAfterMatchesSyncReplicaSet(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			if s.now.IsZero() {
				s.now = base
			}
			rs := replicaSetGen(s).Draw(t, "rs")
			active := podsGen(s, 0, 8).Draw(t, "active")
			later := s.now.Add(rapid.SampledFrom([]time.Duration{0, 1, time.Second, time.Duration(max(s.minReady, 0)) * time.Second,
				time.Duration(max(s.minReady, 0))*time.Second + 1, time.Hour}).Draw(t, "elapsed"))
			st := upstreamCalculateStatus(rs.DeepCopy(), active, nil, nil, replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: true}, s.now)

			var want *time.Duration
			if rs.Spec.MinReadySeconds > 0 && st.ReadyReplicas != st.AvailableReplicas {
				want = ptrTo(time.Duration(rs.Spec.MinReadySeconds) * time.Second)
				if next := controller.FindMinNextPodAvailabilityCheck(active, rs.Spec.MinReadySeconds, s.now, testingclock.NewFakePassiveClock(later)); next != nil {
					want = next
				}
			}
			got, ok := status.RequeueAfter(st.ReadyReplicas, st.AvailableReplicas, active, rs.Spec.MinReadySeconds, s.now, later)
			addCases(1)
			if ok != (want != nil) || (ok && got != *want) {
				t.Fatalf("RequeueAfter = %v, %v; upstream %v", got, ok, want)
			}
		})
	})
}
