package reconcile_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// recNopPods is an in-memory PodControl that accepts every call and stores
// nothing, so a benchmark measures the Manager, not a fake API. It names a
// pod sent with a GenerateName, as an API server does (a Controller reports
// a created pod without a name as an error).
type recNopPods struct{}

func (recNopPods) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if pod.Name == "" {
		pod.Name = pod.GenerateName + "x"
	}
	return pod, nil
}

func (recNopPods) DeletePod(context.Context, *corev1.Pod) error { return nil }

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

// BenchmarkControllerSync measures one Controller.Sync of a ReplicaSet
// whose 1,000 pods are all in place (the cost of every resync): list,
// claim, expectations check, counts and the status callback.
func BenchmarkControllerSync(b *testing.B) {
	rs := recRS(1000)
	pods := labelled(recOwned(rs, 1000, podtest.Ready(podtest.Epoch)))
	c := newRecController(b, newRecOwners(rs), pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.PodClient = withControl(cfg.Cluster.PodClient, recNopPods{})
		cfg.Clock = fakeclock.New(podtest.Epoch.Add(time.Hour))
		noStatus(cfg)
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Sync(ctx, "default/web")
		if err != nil || len(res.Active) != 1000 || res.Outcome.Expected != 0 {
			b.Fatalf("sync: %d active, %v", len(res.Active), err)
		}
	}
}

// BenchmarkControllerSyncParallel measures Controller.Sync on both cores at
// once: every goroutine syncs its own share of 64 ReplicaSets (one per
// namespace, 10 pods each, all in place), as workers of one workqueue do,
// never two of the same key at once. The cache versions are set, so every
// sync takes the consistency gate's lock (Ready, and the record of the
// skipped status write) and the expectations' lock (Check): what the
// choice of their locking is measured on (expectations/tracker.go).
func BenchmarkControllerSyncParallel(b *testing.B) {
	const owners = 64
	var rss []*appsv1.ReplicaSet
	var pods []*corev1.Pod
	keys := make([]string, owners)
	for i := range owners {
		rs := recRS(10)
		rs.Namespace = "ns-" + strconv.Itoa(i)
		rs.UID = types.UID("uid-web-" + strconv.Itoa(i))
		rs.ResourceVersion = "10"
		rss = append(rss, rs)
		for _, p := range recOwned(rs, 10, podtest.Ready(podtest.Epoch)) {
			p.Namespace = rs.Namespace
			pods = append(pods, p)
		}
		keys[i] = reconcile.OwnerKey(rs.Namespace, rs.Name)
	}
	c := newFleetController(b, rss, pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		caught := func() string { return "1000000" }
		cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: caught, Owners: caught}
	})
	ctx := context.Background()
	var workers atomic.Int32
	stride := runtime.GOMAXPROCS(0) // RunParallel's goroutines
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(workers.Add(1)-1) % stride
		for pb.Next() {
			res, err := c.Sync(ctx, keys[i])
			if err != nil || len(res.Active) != 10 || res.Outcome.Expected != 0 {
				b.Errorf("sync %s: %d active, %v", keys[i], len(res.Active), err)
				return
			}
			if i += stride; i >= owners {
				i %= stride
			}
		}
	})
}
