package conformance

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/util/consistency"
	"k8s.io/utils/clock"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/status"
)

// setField overwrites an unexported field of the controller (the clock and
// the queue), so that syncReplicaSet runs on a scripted clock and its
// delayed enqueue can be observed.
func setField[T any](rsc *replicaset.ReplicaSetController, name string, v T) {
	f := reflect.ValueOf(rsc).Elem().FieldByName(name)
	*(*T)(unsafe.Pointer(f.UnsafeAddr())) = v
}

// scriptedClock returns the given instants in turn, then the last forever.
type scriptedClock struct {
	mu    sync.Mutex
	times []time.Time
}

func (c *scriptedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.times[0]
	if len(c.times) > 1 {
		c.times = c.times[1:]
	}
	return t
}

func (c *scriptedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

var _ clock.PassiveClock = (*scriptedClock)(nil)

// recordingQueue records AddAfter and otherwise does nothing.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	after []time.Duration
}

func (q *recordingQueue) AddAfter(_ string, d time.Duration) { q.after = append(q.after, d) }

// TestRequeueMatchesSyncReplicaSetItself drives the real syncReplicaSet of a
// ReplicaSetController (NewBaseController on unstarted informers and a fake
// clientset) whose pods need no create or delete, on a scripted clock (the
// sync's start, the status instant now, then a later reading), and compares
// its delayed enqueue with status.RequeueAfter over the counts
// status.Calculate gives for the same pods at now.
func TestRequeueMatchesSyncReplicaSetItself(t *testing.T) {
	// One controller for all cases (building a fake clientset costs more
	// than a sync); each case replaces the indexers' contents, the clock and
	// the queue. The ReplicaSet in the fake clientset only receives the
	// status writes.
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	rsInf, podInf := f.Apps().V1().ReplicaSets(), f.Core().V1().Pods()
	seed := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "rs-uid"}}
	rsc := replicaset.NewBaseController(logr.Discard(), rsInf, podInf, fake.NewClientset(seed), replicaset.BurstReplicas, replicaSetKind,
		"replicaset_controller", "replicaset", &upstreamPodControl{o: &outcomes{}}, nil,
		replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: true}, consistency.NewNoopConsistencyStore())
	requeued := 0
	defer func() { t.Logf("syncs that requeued for availability: %d", requeued) }()
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			s.now = base
			pods := podsGen(s, 0, 6).Draw(t, "pods")
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: s.ownerUID}}
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			rs.Spec.Template.Labels = map[string]string{"app": "web"}
			rs.Spec.MinReadySeconds = s.minReady
			for _, p := range pods {
				p.Labels = map[string]string{"app": "web"}
				p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, replicaSetKind)}
				p.UID = types.UID("uid-" + p.Name)
			}
			active, terminating := podrank.FilterActive(pods), podrank.FilterTerminating(pods)
			rs.Spec.Replicas = ptrTo(int32(len(active))) // nothing to create or delete
			later := s.now.Add(rapid.SampledFrom([]time.Duration{0, 1, time.Second, time.Duration(max(s.minReady, 0)) * time.Second}).Draw(t, "elapsed"))

			objs := []any{rs}
			for _, p := range pods {
				objs = append(objs, p)
			}
			_ = rsInf.Informer().GetIndexer().Replace([]any{rs}, "")
			_ = podInf.Informer().GetIndexer().Replace(objs[1:], "")
			q := &recordingQueue{}
			setField[clock.PassiveClock](rsc, "clock", &scriptedClock{times: []time.Time{s.now, s.now, later}})
			setField[workqueue.TypedRateLimitingInterface[string]](rsc, "queue", q)

			err := upstreamSyncReplicaSet(rsc, context.Background(), "ns/rs")
			if err != nil {
				t.Fatalf("harness: syncReplicaSet: %v", err)
			}
			st := status.Calculate(rs, active, terminating, nil, s.now, status.Options{})
			got, ok := status.RequeueAfter(st.ReadyReplicas, st.AvailableReplicas, active, rs.Spec.MinReadySeconds, s.now, later)
			addCases(1)
			if len(q.after) == 1 {
				requeued++
			}
			if ok != (len(q.after) == 1) || len(q.after) > 1 || (ok && got != q.after[0]) {
				t.Fatalf("RequeueAfter = %v, %v; syncReplicaSet's AddAfter calls %v (ready %d, available %d)", got, ok, q.after, st.ReadyReplicas, st.AvailableReplicas)
			}
		})
	})
}
