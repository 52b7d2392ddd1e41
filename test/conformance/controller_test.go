package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/util/consistency"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// This file drives two whole ReplicaSet controllers through the same random
// scenario, each over its own client-go fake clientset: the real v1.37.2
// ReplicaSetController, and the examples' controller (a reconcile.Controller
// wired by adapters/clientgo, see ourSide). Both run synchronously: a
// test-side informer ("pump") moves every change of the clientset's object
// tracker into the caches and calls the event handlers, and each side's
// queue is drained by its own worker step, until neither has anything left
// to do. Nothing sleeps and nothing waits on another goroutine, except the
// concurrent creates and deletes inside one sync, which both controllers
// join before they return.

const ctrlNS = "ns"

var (
	podsGVR = corev1.SchemeGroupVersion.WithResource("pods")
	podsGVK = corev1.SchemeGroupVersion.WithKind("Pod")
	rssGVR  = appsv1.SchemeGroupVersion.WithResource("replicasets")
	rssGVK  = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
)

// syncQueue is a synchronous workqueue: a FIFO set of keys and the delayed
// keys with the (fake) time they are due. It stands in for the real
// controller's queue (the embedded one, for methods nothing calls) and
// serves as the reconcile.Controller's queue.
type syncQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	clock   clock.PassiveClock
	items   []string
	delayed map[string]time.Time
	retries int
}

func newSyncQueue(c clock.PassiveClock) *syncQueue {
	return &syncQueue{clock: c, delayed: map[string]time.Time{}}
}

func (q *syncQueue) Add(key string) {
	if !slices.Contains(q.items, key) {
		q.items = append(q.items, key)
	}
}

func (q *syncQueue) AddAfter(key string, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	due := q.clock.Now().Add(d)
	if cur, ok := q.delayed[key]; !ok || due.Before(cur) {
		q.delayed[key] = due
	}
}

// AddRateLimited retries after retryDelay (fake time): a failed sync is
// retried when the scenario advances the clock, so that its status (the
// ReplicaFailure condition) is seen and compared first.
func (q *syncQueue) AddRateLimited(key string) { q.retries++; q.AddAfter(key, retryDelay) }

const retryDelay = time.Second

func (q *syncQueue) Forget(string)          {}
func (q *syncQueue) Done(string)            {}
func (q *syncQueue) Len() int               { return len(q.items) }
func (q *syncQueue) NumRequeues(string) int { return 0 }

func (q *syncQueue) Get() (string, bool) {
	if len(q.items) == 0 {
		return "", true
	}
	key := q.items[0]
	q.items = q.items[1:]
	return key, false
}

// fire adds the delayed keys that are due.
func (q *syncQueue) fire() {
	now := q.clock.Now()
	for key, due := range q.delayed {
		if !due.After(now) {
			delete(q.delayed, key)
			q.Add(key)
		}
	}
}

// handlers are one side's informer event handlers.
type handlers struct {
	podAdd    func(p *corev1.Pod)
	podUpdate func(old, cur *corev1.Pod)
	podDelete func(p *corev1.Pod)
	rsAdd     func(rs *appsv1.ReplicaSet)
	rsUpdate  func(old, cur *appsv1.ReplicaSet)
	rsDelete  func(rs *appsv1.ReplicaSet)
}

// cluster is one side: a fake clientset whose creates get names, UIDs,
// creation times and distinct deletion costs (see newCluster), the caches
// its controller reads, and the pump that keeps them in step.
type cluster struct {
	client  *fake.Clientset
	podIdx  cache.Indexer
	rsIdx   cache.Indexer
	h       handlers
	rv      int
	mu      sync.Mutex
	created map[string]int // create calls by GenerateName
	// failCreate says which create calls (by call number of their
	// GenerateName, from 1) the API refuses, the same on both sides.
	failCreate map[int]bool
}

// newCluster returns a fake clientset that fills in what the API server
// would on create and the fake does not: a name from GenerateName, a UID,
// the creation time (clk) and, so that the choice of pods to delete is one
// total order whatever clock each controller ranks with, a distinct
// pod-deletion-cost (growing with n, the n-th pod created under a
// GenerateName: the oldest go first). Both sides number the create calls of each
// GenerateName (each ReplicaSet) in call order, so equal behaviour gives
// equal names, whichever ReplicaSet syncs first.
func newCluster(clk clock.PassiveClock, podIdx, rsIdx cache.Indexer) *cluster {
	// NewSimpleClientset, not NewClientset: the latter's field-managed
	// tracker builds a REST mapper on every write, three quarters of this
	// test's time, and nothing here uses server-side apply.
	c := &cluster{client: fake.NewSimpleClientset(), podIdx: podIdx, rsIdx: rsIdx, created: map[string]int{}}
	c.client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		c.mu.Lock()
		c.created[pod.GenerateName]++
		n := c.created[pod.GenerateName]
		fail := c.failCreate[n]
		c.mu.Unlock()
		if fail {
			return true, nil, errQuota
		}
		if pod.Name == "" && pod.GenerateName != "" {
			pod.Name = fmt.Sprintf("%s%03d", pod.GenerateName, n)
		}
		if pod.UID == "" {
			pod.UID = types.UID("uid-" + pod.Name)
		}
		if pod.CreationTimestamp.IsZero() {
			pod.CreationTimestamp = metav1.NewTime(clk.Now())
		}
		if _, ok := pod.Annotations[costAnnotation]; !ok {
			pod.Annotations = maps.Clone(pod.Annotations)
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			// Distinct across GenerateNames too: an adopted pod keeps
			// its cost among its new owner's pods.
			pod.Annotations[costAnnotation] = strconv.Itoa(100*n + len(pod.GenerateName))
		}
		return false, nil, nil // the tracker stores it
	})
	return c
}

const costAnnotation = "controller.kubernetes.io/pod-deletion-cost"

var errQuota = apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("exceeded quota"))

// pump delivers every difference between the object tracker and the caches
// as informer events (ReplicaSets first, then pods, in key order), with a
// fresh resourceVersion for every new or changed object (the fake tracker
// keeps none in the objects). It returns the number of events.
func (c *cluster) pump(t *rapid.T) int {
	n := 0
	rsObj, err := c.client.Tracker().List(rssGVR, rssGVK, "")
	if err != nil {
		t.Fatalf("harness: list replicasets: %v", err)
	}
	var rss []metav1.Object
	for i := range rsObj.(*appsv1.ReplicaSetList).Items {
		rss = append(rss, &rsObj.(*appsv1.ReplicaSetList).Items[i])
	}
	n += c.pumpKind(t, c.rsIdx, rss, func(old, cur runtime.Object) {
		switch {
		case old == nil:
			c.h.rsAdd(cur.(*appsv1.ReplicaSet))
		case cur == nil:
			c.h.rsDelete(old.(*appsv1.ReplicaSet))
		default:
			c.h.rsUpdate(old.(*appsv1.ReplicaSet), cur.(*appsv1.ReplicaSet))
		}
	})
	podObj, err := c.client.Tracker().List(podsGVR, podsGVK, "")
	if err != nil {
		t.Fatalf("harness: list pods: %v", err)
	}
	var pods []metav1.Object
	for i := range podObj.(*corev1.PodList).Items {
		pods = append(pods, &podObj.(*corev1.PodList).Items[i])
	}
	n += c.pumpKind(t, c.podIdx, pods, func(old, cur runtime.Object) {
		switch {
		case old == nil:
			c.h.podAdd(cur.(*corev1.Pod))
		case cur == nil:
			c.h.podDelete(old.(*corev1.Pod))
		default:
			c.h.podUpdate(old.(*corev1.Pod), cur.(*corev1.Pod))
		}
	})
	return n
}

func (c *cluster) pumpKind(t *rapid.T, idx cache.Indexer, listed []metav1.Object, deliver func(old, cur runtime.Object)) int {
	n := 0
	seen := map[string]bool{}
	slices.SortFunc(listed, func(a, b metav1.Object) int { return compareStrings(a.GetName(), b.GetName()) })
	for _, obj := range listed {
		key := obj.GetNamespace() + "/" + obj.GetName()
		seen[key] = true
		oldObj, exists, _ := idx.GetByKey(key)
		cur := obj.(runtime.Object).DeepCopyObject()
		if exists {
			old := oldObj.(runtime.Object)
			if sameButVersion(old, cur) {
				continue
			}
		}
		c.rv++
		cur.(metav1.Object).SetResourceVersion(strconv.Itoa(c.rv))
		n++
		if !exists {
			_ = idx.Add(cur)
			deliver(nil, cur)
			continue
		}
		_ = idx.Update(cur)
		deliver(oldObj.(runtime.Object), cur)
	}
	keys := idx.ListKeys()
	slices.Sort(keys)
	for _, key := range keys {
		if seen[key] {
			continue
		}
		old, _, _ := idx.GetByKey(key)
		_ = idx.Delete(old)
		n++
		deliver(old.(runtime.Object), nil)
	}
	return n
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sameButVersion compares two objects except their resourceVersions.
func sameButVersion(a, b runtime.Object) bool {
	a, b = a.DeepCopyObject(), b.DeepCopyObject()
	a.(metav1.Object).SetResourceVersion("")
	b.(metav1.Object).SetResourceVersion("")
	return reflect.DeepEqual(a, b)
}

// upstreamSide is the real controller over its cluster.
type upstreamSide struct {
	*cluster
	rsc   *replicaset.ReplicaSetController
	queue *syncQueue
}

func newUpstreamSide(clk *testingclock.FakeClock) *upstreamSide {
	// The informers only lend their indexers (with the controller's
	// indexes); they are never started.
	f := informers.NewSharedInformerFactory(nil, 0)
	rsInf, podInf := f.Apps().V1().ReplicaSets(), f.Core().V1().Pods()
	c := newCluster(clk, podInf.Informer().GetIndexer(), rsInf.Informer().GetIndexer())
	// NewReplicaSetController's own wiring, except: the events go to a
	// recorder that drops them, and the consistency store (the stale-cache
	// guard of StaleControllerConsistencyReplicaSet) is the no-op one — the
	// synchronous pump delivers every write before the next sync, so it
	// would never hold anything back, and it reads resourceVersions the
	// fake tracker does not keep.
	pc := controller.RealPodControl{KubeClient: c.client, Recorder: &record.FakeRecorder{}}
	rsc := replicaset.NewBaseController(logr.Discard(), rsInf, podInf, c.client, replicaset.BurstReplicas, replicaSetKind,
		"replicaset_controller", "replicaset", pc, nil, replicaset.DefaultReplicaSetControllerFeatures(),
		consistency.NewNoopConsistencyStore())
	*upstreamField[clock.PassiveClock](rsc, "clock") = clk
	qf := upstreamField[workqueue.TypedRateLimitingInterface[string]](rsc, "queue")
	q := newSyncQueue(clk)
	q.TypedRateLimitingInterface = *qf
	*qf = q
	logger := logr.Discard()
	c.h = handlers{
		podAdd:    func(p *corev1.Pod) { upstreamAddPod(rsc, logger, p) },
		podUpdate: func(old, cur *corev1.Pod) { upstreamUpdatePod(rsc, logger, old, cur) },
		podDelete: func(p *corev1.Pod) { upstreamDeletePod(rsc, logger, p) },
		rsAdd:     func(rs *appsv1.ReplicaSet) { upstreamAddRS(rsc, logger, rs) },
		rsUpdate:  func(old, cur *appsv1.ReplicaSet) { upstreamUpdateRS(rsc, logger, old, cur) },
		rsDelete:  func(rs *appsv1.ReplicaSet) { upstreamDeleteRS(rsc, logger, rs) },
	}
	return &upstreamSide{cluster: c, rsc: rsc, queue: q}
}

// work processes one key; false when the queue is empty.
func (s *upstreamSide) work(ctx context.Context) bool {
	if s.queue.Len() == 0 {
		return false
	}
	upstreamProcessNextWorkItem(s.rsc, ctx)
	return true
}

// ourSide is the examples' ReplicaSet controller over its cluster: the
// wiring of examples/replicaset/controller.New — reconcile.ReplicaSets()
// with adapters/clientgo's ReplicaSetOwners, Pods, PodControl (also the
// PodPatcher) and ReplicaSetStatus, its PodHandler and OwnerHandler
// feeding the queue, a clientgo.Worker's step — built here rather than by
// New because New takes no clock (its availability arithmetic would read
// the wall clock, upstream's here reads the scenario's) and runs its
// queue on goroutines.
type ourSide struct {
	*cluster
	ctrl  *reconcile.Controller[*appsv1.ReplicaSet]
	queue *syncQueue
}

func newOurSide(t *rapid.T, clk *testingclock.FakeClock, indexed bool) *ourSide {
	f := informers.NewSharedInformerFactory(nil, 0) // only for the indexers; never started
	rsInf, podInf := f.Apps().V1().ReplicaSets().Informer(), f.Core().V1().Pods().Informer()
	if indexed {
		// What clientgo.Register adds: the lookups by controller reference
		// and controller UID read these instead of listing the namespace.
		if err := clientgo.AddPodControllerIndexer(podInf); err != nil {
			t.Fatalf("harness: %v", err)
		}
		if err := clientgo.AddControllerUIDIndexer(rsInf); err != nil {
			t.Fatalf("harness: %v", err)
		}
	}
	c := newCluster(clk, podInf.GetIndexer(), rsInf.GetIndexer())
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = clientgo.ReplicaSetOwners(c.client, rsInf)
	cfg.Cluster.Pods = clientgo.Pods{Indexer: podInf.GetIndexer()}
	cfg.Cluster.PodClient = clientgo.PodControl{Client: c.client}
	cfg.Cluster.StatusWriter = clientgo.ReplicaSetStatusWriter{Client: c.client}
	cfg.Cluster.CachesSynced = func() bool { return true } // the harness fills the indexers itself; the informers never run
	cfg.Clock = clk
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		t.Fatalf("harness: NewController: %v", err)
	}
	q := newSyncQueue(clk)
	podH, rsH := clientgo.PodHandler(ctrl, q), clientgo.OwnerHandler(ctrl, q)
	c.h = handlers{
		podAdd:    func(p *corev1.Pod) { podH.OnAdd(p, false) },
		podUpdate: func(old, cur *corev1.Pod) { podH.OnUpdate(old, cur) },
		podDelete: func(p *corev1.Pod) { podH.OnDelete(p) },
		rsAdd:     func(rs *appsv1.ReplicaSet) { rsH.OnAdd(rs, false) },
		rsUpdate:  func(old, cur *appsv1.ReplicaSet) { rsH.OnUpdate(old, cur) },
		rsDelete:  func(rs *appsv1.ReplicaSet) { rsH.OnDelete(rs) },
	}
	return &ourSide{cluster: c, ctrl: ctrl, queue: q}
}

// work processes one key as a clientgo.Worker does; false when the queue
// is empty.
func (s *ourSide) work(ctx context.Context) bool {
	key, empty := s.queue.Get()
	if empty {
		return false
	}
	defer s.queue.Done(key)
	res, err := s.ctrl.Sync(ctx, key)
	switch {
	case err == nil:
		if res.RequeueAfter > 0 {
			s.queue.AddAfter(key, res.RequeueAfter)
		}
		s.queue.Forget(key)
	case errors.Is(err, reconcile.ErrTerminal):
		s.queue.Forget(key)
	default:
		s.queue.AddRateLimited(key)
	}
	return true
}

// settle pumps events and works the queue until neither has anything left
// (bounded: a controller that never settles is a failure).
func settle(t *rapid.T, who string, c *cluster, work func() bool) {
	for round := 0; ; round++ {
		if round == 50 {
			t.Fatalf("%s: still busy after %d rounds", who, round)
		}
		events := c.pump(t)
		worked := false
		for work() {
			worked = true
		}
		if events == 0 && !worked {
			return
		}
	}
}

// podSummary is what the comparison looks at of a pod.
type podSummary struct {
	Labels     map[string]string
	Controller string // kind/name/uid of the controller ref, "" for none
	Refs       int
	Deleting   bool
	Cost       string
}

func summarizePods(t *rapid.T, c *cluster) map[string]podSummary {
	obj, err := c.client.Tracker().List(podsGVR, podsGVK, "")
	if err != nil {
		t.Fatalf("harness: list pods: %v", err)
	}
	out := map[string]podSummary{}
	for _, p := range obj.(*corev1.PodList).Items {
		s := podSummary{Labels: p.Labels, Refs: len(p.OwnerReferences), Deleting: p.DeletionTimestamp != nil, Cost: p.Annotations[costAnnotation]}
		if len(s.Labels) == 0 {
			s.Labels = nil
		}
		if r := metav1.GetControllerOf(&p); r != nil {
			s.Controller = fmt.Sprintf("%s/%s/%s/%s/block=%v", r.APIVersion, r.Kind, r.Name, r.UID, r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion)
		}
		out[p.Name] = s
	}
	return out
}

// writes counts one step's writes in the clientset's action log: pod
// creates, pod deletes (by name), pod patches, status updates.
type writes struct {
	Creates       int
	Deleted       []string
	Patched       []string
	StatusUpdates int
}

func takeWrites(c *cluster) writes {
	var w writes
	for _, a := range c.client.Actions() {
		switch {
		case a.Matches("create", "pods"):
			w.Creates++
		case a.Matches("delete", "pods"):
			w.Deleted = append(w.Deleted, a.(k8stesting.DeleteAction).GetName())
		case a.Matches("patch", "pods"):
			w.Patched = append(w.Patched, a.(k8stesting.PatchAction).GetName())
		case a.Matches("update", "replicasets") && a.GetSubresource() == "status":
			w.StatusUpdates++
		}
	}
	c.client.ClearActions()
	slices.Sort(w.Deleted)
	slices.Sort(w.Patched)
	return w
}

func getRS(t *rapid.T, c *cluster, name string) (*appsv1.ReplicaSet, bool) {
	obj, err := c.client.Tracker().Get(rssGVR, ctrlNS, name)
	if err != nil {
		return nil, false
	}
	return obj.(*appsv1.ReplicaSet), true
}

// both applies a scenario write to both clusters (as a user or the kubelet
// would, through the tracker, without an action-log entry).
func both(t *rapid.T, up, ours *cluster, f func(c *cluster) error) {
	if err := f(up); err != nil {
		t.Fatalf("harness (upstream cluster): %v", err)
	}
	if err := f(ours); err != nil {
		t.Fatalf("harness (our cluster): %v", err)
	}
}

func updatePod(c *cluster, name string, f func(p *corev1.Pod)) error {
	obj, err := c.client.Tracker().Get(podsGVR, ctrlNS, name)
	if err != nil {
		return err
	}
	p := obj.(*corev1.Pod).DeepCopy()
	f(p)
	return c.client.Tracker().Update(podsGVR, p, ctrlNS)
}

func updateRS(c *cluster, name string, f func(rs *appsv1.ReplicaSet)) error {
	obj, err := c.client.Tracker().Get(rssGVR, ctrlNS, name)
	if err != nil {
		return err
	}
	rs := obj.(*appsv1.ReplicaSet).DeepCopy()
	f(rs)
	return c.client.Tracker().Update(rssGVR, rs, ctrlNS)
}

func podNames(t *rapid.T, c *cluster) []string {
	names := slices.Collect(maps.Keys(summarizePods(t, c)))
	slices.Sort(names)
	return names
}

// TestControllerMatchesReplicaSetController runs the real
// ReplicaSetController and the examples' controller through the same random
// scenario — ReplicaSet rs (selector app=web) and maybe rs2 (app=db), 0–5
// replicas, minReadySeconds 0 or 10, orphans, some create calls refused —
// then steps that scale a ReplicaSet, delete pods, mark pods terminating,
// add orphans that match one ReplicaSet or none (some controlled by a
// deleted incarnation), relabel pods (release, adoption by the other),
// make pods ready or unready, advance the clock (firing due availability
// requeues and retries), delete a ReplicaSet or recreate it, also under a
// new UID between two events; after every step, once both have settled, it
// compares the pods (names, labels, controller refs, terminating, cost),
// the writes of the step (creates, deleted and patched pod names, status
// writes), each ReplicaSet's status (written in the same sync as the
// creates and deletes, from the pods listed before them: ), the
// expectations and the pending delayed requeues.
//
// The selectors do not overlap: a pod matching two orphan-seeking
// ReplicaSets goes to whichever syncs first, which upstream leaves to the
// lister's map order.
func TestControllerMatchesReplicaSetController(t *testing.T) {
	controllerDifferential(t, false)
}

// TestControllerWithIndexesMatchesReplicaSetController is
// TestControllerMatchesReplicaSetController with our side's informers
// indexed as clientgo.Register indexes them (R-10.10: pods by controller
// reference, ReplicaSets by controller UID), so every sync reads the
// ReplicaSet's pods and the orphans through the index where upstream reads
// its own; and the orphans the scenario adds also include pods controlled
// by a same-named owner of another kind (a PodSet "rs") and by an owner
// that is not a ReplicaSet of this cluster, beside those of an earlier
// incarnation (same name, another UID); relabelling releases pods, which
// moves them to the orphans' key.
func TestControllerWithIndexesMatchesReplicaSetController(t *testing.T) {
	controllerDifferential(t, true)
}

func controllerDifferential(t *testing.T, indexed bool) {
	var reached controllerCorners
	t.Cleanup(func() { reached.check(t) })
	differential(t, func(t *testing.T) {
		withChecksDivided(controllerChecksDivisor, func() {
			rapid.Check(t, func(t *rapid.T) {
				ctx := context.Background()
				clk := testingclock.NewFakeClock(base)
				up := newUpstreamSide(clk)
				defer up.queue.ShutDown()
				ours := newOurSide(t, clk, indexed)
				upExp := expectationsOf(up.rsc)
				fails := map[int]bool{}
				for _, n := range rapid.SliceOfN(rapid.IntRange(1, 12), 0, 4).Draw(t, "failingCreates") {
					fails[n] = true
				}
				up.failCreate, ours.failCreate = fails, fails
				sc := &scenario{t: t, up: up, ours: ours, incarnation: map[string]int{}, foreign: indexed,
					minReady: rapid.SampledFrom([]int32{0, 10}).Draw(t, "minReadySeconds")}

				sc.createRS("rs", int32(rapid.IntRange(0, 5).Draw(t, "replicas")))
				if rapid.Bool().Draw(t, "rs2") {
					sc.createRS("rs2", int32(rapid.IntRange(0, 3).Draw(t, "replicas2")))
				}
				for i, n := 0, rapid.IntRange(0, 2).Draw(t, "initialOrphans"); i < n; i++ {
					sc.addOrphan()
				}

				steps := rapid.IntRange(1, 8).Draw(t, "steps")
				for step := 0; step <= steps; step++ {
					what := "create"
					if step > 0 {
						what = sc.step()
					}
					settle(t, "upstream", up.cluster, func() bool { return up.work(ctx) })
					settle(t, "reconcile", ours.cluster, func() bool { return ours.work(ctx) })
					addCases(1)

					uw, ow := takeWrites(up.cluster), takeWrites(ours.cluster)
					if !reflect.DeepEqual(uw, ow) {
						t.Fatalf("step %d (%s): writes %+v, upstream %+v", step, what, ow, uw)
					}
					reached.note(uw, len(up.queue.delayed), up.queue.retries)
					if up, our := summarizePods(t, up.cluster), summarizePods(t, ours.cluster); !reflect.DeepEqual(up, our) {
						t.Fatalf("step %d (%s): pods\n%v\nupstream\n%v", step, what, our, up)
					}
					for _, name := range rsNames {
						urs, uok := getRS(t, up.cluster, name)
						ors, ook := getRS(t, ours.cluster, name)
						if uok && ook {
							st, applied := documentedStatus(urs.Status, ors.Status)
							if reflect.DeepEqual(st, ors.Status) {
								for _, name := range applied {
									noteDocumented(name)
								}
								urs = urs.DeepCopy()
								urs.Status = st
							}
						}
						if uok != ook || (uok && !reflect.DeepEqual(urs.Status, ors.Status)) {
							t.Fatalf("step %d (%s): %s status %+v (%v), upstream %+v (%v)", step, what, name, statusOf(ors), ook, statusOf(urs), uok)
						}
						key := ctrlNS + "/" + name
						a, d, found := ours.ctrl.Tracker().Pending(key)
						rec, exists, _ := upExp.GetExpectations(key)
						var ua, ud int64
						if exists {
							ua, ud = rec.GetExpectations()
						}
						if found != exists || int64(a) != ua || int64(d) != ud {
							t.Fatalf("step %d (%s): %s expectations %d, %d (%v), upstream %d, %d (%v)", step, what, key, a, d, found, ua, ud, exists)
						}
					}
					if !maps.Equal(up.queue.delayed, ours.queue.delayed) {
						t.Fatalf("step %d (%s): delayed requeues %v, upstream %v", step, what, ours.queue.delayed, up.queue.delayed)
					}
				}
			})
		})
	})
}

var rsNames = []string{"rs", "rs2"}

// rsApp is the app label each ReplicaSet selects and stamps.
var rsApp = map[string]string{"rs": "web", "rs2": "db"}

// scenario applies the same user and kubelet writes to both clusters
// (through their object trackers, so without action-log entries).
type scenario struct {
	t           *rapid.T
	up          *upstreamSide
	ours        *ourSide
	minReady    int32
	incarnation map[string]int
	orphans     int
	// foreign adds orphans controlled by other kinds and other owners.
	foreign bool
}

func (sc *scenario) both(f func(c *cluster) error) {
	both(sc.t, sc.up.cluster, sc.ours.cluster, f)
}

func (sc *scenario) newRS(name string, replicas int32) *appsv1.ReplicaSet {
	sc.incarnation[name]++
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ctrlNS, Name: name, Generation: 1,
		UID: types.UID(fmt.Sprintf("%s-uid-%d", name, sc.incarnation[name]))}}
	rs.Spec.Replicas = ptrTo(replicas)
	rs.Spec.MinReadySeconds = sc.minReady
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": rsApp[name]}}
	rs.Spec.Template.Labels = map[string]string{"app": rsApp[name]}
	rs.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "img"}}
	return rs
}

func (sc *scenario) createRS(name string, replicas int32) {
	rs := sc.newRS(name, replicas)
	sc.both(func(c *cluster) error { return c.client.Tracker().Add(rs.DeepCopy()) })
}

func (sc *scenario) addOrphan() {
	t := sc.t
	sc.orphans++
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ctrlNS, Name: fmt.Sprintf("orphan-%d", sc.orphans),
		Labels: rapid.SampledFrom([]map[string]string{{"app": "web"}, {"app": "db"}, {"app": "cache"}, {"app": "web", "tier": "x"}}).Draw(t, "orphanLabels"),
		// Costs apart from the created pods' (1, 2, …).
		Annotations: map[string]string{costAnnotation: strconv.Itoa(-sc.orphans)}}}
	p.UID = types.UID("uid-" + p.Name)
	// Some are still controlled by an earlier incarnation of a ReplicaSet
	// (no garbage collector runs here).
	if name := rapid.SampledFrom(rsNames).Draw(t, "orphanOf"); rapid.Bool().Draw(t, "orphanOfOldRS") && sc.incarnation[name] > 1 {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(fmt.Sprintf("%s-uid-%d", name, sc.incarnation[name]-1))}}, replicaSetKind)}
	}
	if sc.foreign && p.OwnerReferences == nil {
		switch rapid.IntRange(0, 2).Draw(t, "foreignController") {
		case 1: // a same-named owner of another kind
			name := rapid.SampledFrom(rsNames).Draw(t, "foreignName")
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(&metav1.ObjectMeta{
				Name: name, UID: types.UID(name + "-podset-uid")}, schema.GroupVersionKind{Group: "demo.reconcilekit.dev", Version: "v1alpha1", Kind: "PodSet"})}
		case 2: // another owner's
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
				Name: "elsewhere", UID: "elsewhere-uid"}}, replicaSetKind)}
		}
	}
	sc.both(func(c *cluster) error { return c.client.Tracker().Add(p.DeepCopy()) })
}

// step applies one random step and says which.
func (sc *scenario) step() string {
	t, up := sc.t, sc.up
	names := podNames(t, up.cluster)
	pick := func(label string) (string, bool) {
		if len(names) == 0 {
			return "", false
		}
		return rapid.SampledFrom(names).Draw(t, label), true
	}
	rsName := rapid.SampledFrom(rsNames).Draw(t, "rsName")
	_, rsExists := getRS(t, up.cluster, rsName)
	switch rapid.IntRange(0, 9).Draw(t, "step") {
	case 0, 1:
		if !rsExists {
			break
		}
		n := int32(rapid.IntRange(0, 6).Draw(t, "scaleTo"))
		sc.both(func(c *cluster) error {
			return updateRS(c, rsName, func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptrTo(n); rs.Generation++ })
		})
		return fmt.Sprintf("scale %s to %d", rsName, n)
	case 2:
		if name, ok := pick("deletePod"); ok {
			sc.both(func(c *cluster) error { return c.client.Tracker().Delete(podsGVR, ctrlNS, name) })
			return "delete pod " + name
		}
	case 3:
		if name, ok := pick("terminatePod"); ok {
			sc.both(func(c *cluster) error {
				return updatePod(c, name, func(p *corev1.Pod) {
					if p.DeletionTimestamp == nil {
						p.DeletionTimestamp = &metav1.Time{Time: base}
					}
				})
			})
			return "terminate pod " + name
		}
	case 4:
		sc.addOrphan()
		return "add orphan"
	case 5:
		if name, ok := pick("relabelPod"); ok {
			labels := rapid.SampledFrom([]map[string]string{{"app": "db"}, {"app": "web"}, {"app": "cache"}, {"app": "web", "tier": "y"}}).Draw(t, "relabel")
			sc.both(func(c *cluster) error {
				return updatePod(c, name, func(p *corev1.Pod) { p.Labels = maps.Clone(labels) })
			})
			return fmt.Sprintf("relabel %s %v", name, labels)
		}
	case 6:
		if name, ok := pick("readyPod"); ok {
			ready := rapid.IntRange(0, 2).Draw(t, "ready") > 0
			now := up.queue.clock.Now()
			sc.both(func(c *cluster) error {
				return updatePod(c, name, func(p *corev1.Pod) {
					p.Status.Phase = corev1.PodRunning
					st := corev1.ConditionFalse
					if ready {
						st = corev1.ConditionTrue
					}
					p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(now)}}
				})
			})
			return fmt.Sprintf("pod %s ready=%v", name, ready)
		}
	case 7:
		d := time.Duration(rapid.SampledFrom([]int{1, 5, 10, 11}).Draw(t, "advance")) * time.Second
		up.queue.clock.(*testingclock.FakeClock).Step(d)
		up.queue.fire()
		sc.ours.queue.fire()
		return fmt.Sprintf("advance %v", d)
	case 8:
		if rsExists {
			sc.both(func(c *cluster) error { return c.client.Tracker().Delete(rssGVR, ctrlNS, rsName) })
			return "delete " + rsName
		}
		sc.createRS(rsName, int32(rapid.IntRange(0, 5).Draw(t, "recreateReplicas")))
		return "recreate " + rsName
	case 9:
		if !rsExists {
			break
		}
		// Deleted and recreated between two watch events: the informer
		// sees an update with a new UID.
		rs := sc.newRS(rsName, int32(rapid.IntRange(0, 5).Draw(t, "replaceReplicas")))
		sc.both(func(c *cluster) error { return c.client.Tracker().Update(rssGVR, rs.DeepCopy(), ctrlNS) })
		return "replace " + rsName + " (new UID)"
	}
	return "nothing"
}

// controllerCorners counts what the scenarios made the controllers do,
// over all checks of one run.
type controllerCorners struct {
	creates, deletes, patches, statusWrites, delayed, retries atomic.Int64
}

func (c *controllerCorners) note(w writes, delayed, retries int) {
	c.creates.Add(int64(w.Creates))
	c.deletes.Add(int64(len(w.Deleted)))
	c.patches.Add(int64(len(w.Patched)))
	c.statusWrites.Add(int64(w.StatusUpdates))
	c.delayed.Add(int64(delayed))
	c.retries.Add(int64(retries))
}

// check logs the counts and, in a run of at least 200 checks, fails when
// the scenarios never made the controllers create, delete, adopt or
// release, write a status or plan an availability requeue.
func (c *controllerCorners) check(t *testing.T) {
	counts := map[string]int64{"creates": c.creates.Load(), "deletes": c.deletes.Load(), "patches": c.patches.Load(),
		"status writes": c.statusWrites.Load(), "delayed requeues": c.delayed.Load(), "sync retries": c.retries.Load()}
	t.Logf("writes seen: %v", counts)
	if n, _ := strconv.Atoi(flag.Lookup("rapid.checks").Value.String()); n/controllerChecksDivisor < 200 || testing.Short() || t.Failed() {
		return
	}
	for name, n := range counts {
		if n == 0 && name != "sync retries" {
			t.Errorf("the scenarios never reached: %s", name)
		}
	}
}

// excJoinedManageErrors: when several pod creates or deletes of one sync
// fail, Manager.ManageReplicas (and so Controller.Sync) returns
// errors.Join of all of them in call order, where upstream returns one of
// them; the ReplicaFailure condition's message then lists every failure,
// one per line, upstream's among them (documented on
// reconcile.Manager.ManageReplicas).
const excJoinedManageErrors = "manage-errors-joined"

// documentedStatus returns up with the parts of its ReplicaFailure
// condition that may differ from ours for a documented reason replaced by
// ours', and the names of the exceptions that applied: the transition time
// (excConditionTime) and a message that joins several failures, upstream's
// among them (excJoinedManageErrors).
func documentedStatus(up, ours appsv1.ReplicaSetStatus) (appsv1.ReplicaSetStatus, []string) {
	if reflect.DeepEqual(up, ours) || len(up.Conditions) != len(ours.Conditions) {
		return up, nil
	}
	up = *up.DeepCopy()
	var applied []string
	for i, u := range up.Conditions {
		o := ours.Conditions[i]
		if u.Type != appsv1.ReplicaSetReplicaFailure || o.Type != appsv1.ReplicaSetReplicaFailure {
			continue
		}
		if !u.LastTransitionTime.Equal(&o.LastTransitionTime) {
			up.Conditions[i].LastTransitionTime = o.LastTransitionTime
			applied = append(applied, excConditionTime)
		}
		if lines := strings.Split(o.Message, "\n"); u.Message != o.Message && len(lines) > 1 && slices.Contains(lines, u.Message) {
			up.Conditions[i].Message = o.Message
			applied = append(applied, excJoinedManageErrors)
		}
	}
	return up, applied
}

func statusOf(rs *appsv1.ReplicaSet) any {
	if rs == nil {
		return nil
	}
	return rs.Status
}
