package reconcile_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// recNopPods is an in-memory PodControl that accepts every call and stores
// nothing, so a benchmark measures the Manager, not a fake API.
type recNopPods struct{}

func (recNopPods) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) { return pod, nil }
func (recNopPods) DeletePod(context.Context, *corev1.Pod) error                      { return nil }

// BenchmarkManageReplicas measures one ManageReplicas call that scales a
// ReplicaSet between 0 and 1,000 pods (burst raised to 1,000 so that one call
// does it all), with counted and with tracked creations; one that halves
// 1,000 pods, which ranks them; and one with nothing to do (the cost every
// sync pays).
func BenchmarkManageReplicas(b *testing.B) {
	now := podtest.Epoch.Add(24 * time.Hour)
	for _, tc := range []struct {
		name  string
		have  int
		want  int32
		track bool
	}{
		{name: "0to1000", have: 0, want: 1000},
		{name: "0to1000/tracked", have: 0, want: 1000, track: true},
		{name: "1000to0", have: 1000, want: 0},
		{name: "1000to500", have: 1000, want: 500},
		{name: "1000to1000", have: 1000, want: 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rs := recRS(tc.want)
			active := recOwned(rs, tc.have, podtest.Ready(podtest.Epoch))
			for i, p := range active {
				p.Spec.NodeName = "node-" + strconv.Itoa(i%50)
				p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(podtest.Epoch.Add(time.Duration(i) * time.Minute))
			}
			m := &reconcile.Manager{Pods: recNopPods{}, BurstReplicas: 1000, Clock: fakeclock.New(now), TrackCreations: tc.track}
			owner := reconcile.ReplicaSetOwner(rs)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				out, err := m.ManageReplicas(ctx, owner, active, active)
				if err != nil || out.Expected != min(recAbs(tc.have-int(tc.want)), 1000) {
					b.Fatalf("outcome %+v, %v", out.Expected, err)
				}
			}
		})
	}
}

func recAbs(x int) int { return max(x, -x) }
