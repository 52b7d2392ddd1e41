package conformance

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// eventWorld is the state one event-sequence case keeps: the ReplicaSets in
// the (shared) informer cache, the pods as the informer last delivered them
// with their earlier versions (for stale tombstones), and the UIDs every
// ReplicaSet name has had (for pods of a deleted or recreated ReplicaSet).
type eventWorld struct {
	rsIndexer cache.Indexer
	rss       map[string]*appsv1.ReplicaSet // by key
	incarn    map[string]int                // by key: the last UID's number
	pods      map[string]*corev1.Pod        // by key
	history   map[string][]*corev1.Pod      // by key: every version delivered
	rv        int
}

var (
	eventRSKeys = []string{"ns/a", "ns/b", "ns/c", "other/a"}
	// eventExpectationKeys are compared after every event: the
	// ReplicaSets' keys and one that never has a ReplicaSet.
	eventExpectationKeys = []string{"ns/a", "ns/b", "ns/c", "other/a", "ns/gone"}
	eventPodKeys         = []string{"ns/p0", "ns/p1", "ns/p2", "ns/p3", "other/p0"}
	// Selectors: overlapping ones (an orphan matching 0, 1 or several
	// ReplicaSets), empty and nil (match nothing) and an invalid one.
	eventSelectors = []*metav1.LabelSelector{
		{MatchLabels: map[string]string{"app": "web"}},
		{MatchLabels: map[string]string{"app": "web", "tier": "x"}},
		{MatchLabels: map[string]string{"app": "db"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}}}},
		{},
		nil,
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}},
	}
	eventLabels = []map[string]string{nil, {}, {"app": "web"}, {"app": "web", "tier": "x"}, {"app": "db"}, {"app": "web", "tier": "y"}}
)

func splitKey(key string) (string, string) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	return ns, name
}

func (w *eventWorld) nextRV() string {
	w.rv++
	return fmt.Sprint(w.rv)
}

func rsUID(key string, n int) types.UID { return types.UID(fmt.Sprintf("%s#%d", key, n)) }

// drawRS draws a ReplicaSet for key with its current incarnation's UID.
func (w *eventWorld) drawRS(t *rapid.T, key string) *appsv1.ReplicaSet {
	ns, name := splitKey(key)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: rsUID(key, w.incarn[key]), ResourceVersion: w.nextRV()}}
	rs.Spec.Replicas = ptrTo(int32(rapid.IntRange(0, 3).Draw(t, "replicas")))
	rs.Spec.Selector = rapid.SampledFrom(eventSelectors).Draw(t, "selector").DeepCopy()
	rs.Spec.MinReadySeconds = rapid.SampledFrom([]int32{5, 0, 5, -1}).Draw(t, "minReadySeconds")
	return rs
}

// drawRefs draws the owner references of a pod in namespace ns: none, a
// controller ref to a ReplicaSet's current, earlier or never-seen UID,
// a non-controller ref, another kind, another apiVersion, several refs.
func (w *eventWorld) drawRefs(t *rapid.T, ns string) []metav1.OwnerReference {
	ref := func() metav1.OwnerReference {
		name := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "refName")
		key := ns + "/" + name
		n := w.incarn[key]
		switch rapid.IntRange(0, 5).Draw(t, "refUID") {
		case 4:
			n-- // an earlier incarnation (or none)
		case 5:
			n = 99 // never existed
		}
		r := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: rsUID(key, n), Controller: ptrTo(true)}
		switch rapid.IntRange(0, 7).Draw(t, "refShape") {
		case 7:
			r.Controller = ptrTo(false)
		case 6:
			r.Controller = nil
		case 5:
			r.Kind = "StatefulSet"
		case 4:
			r.APIVersion = "extensions/v1beta1"
		case 3:
			r.BlockOwnerDeletion = ptrTo(true)
		}
		return r
	}
	n := rapid.SampledFrom([]int{1, 0, 1, 2, 1}).Draw(t, "refs")
	refs := make([]metav1.OwnerReference, 0, n)
	for i := 0; i < n; i++ {
		refs = append(refs, ref())
	}
	return refs
}

func readyConditions(t *rapid.T) []corev1.PodCondition {
	switch rapid.IntRange(0, 2).Draw(t, "ready") {
	case 0:
		return nil
	case 1:
		return []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(base)}}
	default:
		return []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	}
}

func (w *eventWorld) drawPod(t *rapid.T, key string) *corev1.Pod {
	ns, name := splitKey(key)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + key), ResourceVersion: w.nextRV()}}
	p.Labels = maps.Clone(rapid.SampledFrom(eventLabels).Draw(t, "labels"))
	p.OwnerReferences = w.drawRefs(t, ns)
	p.Status.Conditions = readyConditions(t)
	if rapid.IntRange(0, 5).Draw(t, "addDeleting") == 5 {
		p.DeletionTimestamp = &metav1.Time{Time: base}
	}
	return p
}

// TestEventsMatchReplicaSetController feeds random sequences of informer
// events (ReplicaSets added, updated — resyncs, scale, selector and
// minReadySeconds changes, recreation under a new UID —, deleted directly
// or through a tombstone; pods added — some already terminating —, updated
// — resyncs with the same resourceVersion, label, controller-ref and
// readiness changes, deletion timestamps —, deleted directly or through a
// tombstone carrying a stale version) interleaved with the expectations a
// sync would raise, to a reconcile.Controller (through adapters/clientgo's
// PodHandler and OwnerHandler, which unwrap tombstones) and to the real
// ReplicaSetController's handlers (addRS … deletePod), both reading the
// same ReplicaSet cache, and after every event compares what each enqueued —
// keys at once, keys after a delay (minReadySeconds after a pod turned
// ready) — and the expectations of every key: Pending vs GetExpectations,
// the pending deletion keys vs GetUIDs, Satisfied vs SatisfiedExpectations.
//
// Enqueues are compared as sets: upstream enqueues one key twice in places
// where the Controller returns it once (a recreated ReplicaSet: its
// tombstone handler and its update both add it) and enqueues an orphan's
// ReplicaSets in the lister's map order; a workqueue holds a key once, so
// neither changes what is synced.
func TestEventsMatchReplicaSetController(t *testing.T) {
	logger := logr.Discard()
	var reached eventCorners
	// Registered first, so it runs after differential's tally: a generator
	// that misses a corner is a defect of this test, not a disagreement.
	t.Cleanup(func() { reached.check(t) })
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			rsc := newUpstreamController(nil, replicaset.BurstReplicas, nil, nil)
			queue := recordQueue(rsc)
			defer queue.ShutDown()
			upExp := expectationsOf(rsc)
			w := &eventWorld{
				rsIndexer: *upstreamField[cache.Indexer](rsc, "rsIndexer"),
				rss:       map[string]*appsv1.ReplicaSet{},
				incarn:    map[string]int{},
				pods:      map[string]*corev1.Pod{},
				history:   map[string][]*corev1.Pod{},
			}
			ctrl, err := reconcile.NewController(eventsOnlyConfig(*upstreamField[appslisters.ReplicaSetLister](rsc, "rsLister"),
				*upstreamField[corelisters.PodLister](rsc, "podLister"), testingclock.NewFakeClock(base)))
			if err != nil {
				t.Fatalf("harness: NewController: %v", err)
			}
			tr := ctrl.Tracker()
			// The Controller's events arrive through the client-go adapter's
			// handlers, which unwrap tombstones, as in the examples.
			ourQueue := &enqueueRecorder{}
			podH, rsH := clientgo.PodHandler(ctrl, ourQueue), clientgo.OwnerHandler(ctrl, ourQueue)
			prevExp := map[string][2]int64{}

			// Most ReplicaSets exist from the start.
			for _, key := range eventRSKeys {
				if rapid.IntRange(0, 3).Draw(t, "initialRS") < 3 {
					w.incarn[key]++
					rs := w.drawRS(t, key)
					w.rss[key] = rs
					_ = w.rsIndexer.Add(rs)
					upstreamAddRS(rsc, logger, rs)
					rsH.OnAdd(rs, true)
				}
			}
			_, _ = queue.take(), ourQueue.take()
			steps := rapid.IntRange(5, 50).Draw(t, "steps")
			for step := 0; step < steps; step++ {
				var what string
				// An operation on an absent object adds it; an add of a
				// present one updates it.
				// rapid draws small numbers more often: pod updates first.
				op := []int{5, 6, 7, 8, 9, 3, 4, 10, 11, 0, 1, 2}[rapid.IntRange(0, 11).Draw(t, "op")]
				rsKey := rapid.SampledFrom(eventRSKeys).Draw(t, "rsKey")
				podKey := rapid.SampledFrom(eventPodKeys).Draw(t, "podKey")
				podEvent := op >= 3 && op <= 9
				switch {
				case op <= 2:
					if _, ok := w.rss[rsKey]; !ok {
						op = -1 // add
					} else if op == 0 {
						op = 1 // update
					}
				case op <= 9:
					if _, ok := w.pods[podKey]; !ok {
						op = 3 // add
					} else if op <= 4 {
						op = 5 // update
					}
				}
				switch op {
				case -1: // ReplicaSet added
					key := rsKey
					w.incarn[key]++
					rs := w.drawRS(t, key)
					w.rss[key] = rs
					_ = w.rsIndexer.Add(rs)
					what = "addRS " + key
					upstreamAddRS(rsc, logger, rs)
					rsH.OnAdd(rs, false)
				case 1: // ReplicaSet updated
					old := w.rss[rsKey]
					cur := w.updateRS(t, old)
					what = fmt.Sprintf("updateRS %s uid %s -> %s", rsKey, old.UID, cur.UID)
					upstreamUpdateRS(rsc, logger, old, cur)
					rsH.OnUpdate(old, cur)
				case 2: // ReplicaSet deleted
					key := rsKey
					rs := w.rss[key]
					delete(w.rss, key)
					_ = w.rsIndexer.Delete(rs)
					var obj interface{} = rs
					what = "deleteRS " + key
					if rapid.Bool().Draw(t, "rsTombstone") {
						obj = cache.DeletedFinalStateUnknown{Key: key, Obj: rs}
						what += " (tombstone)"
					}
					upstreamDeleteRS(rsc, logger, obj)
					rsH.OnDelete(obj)
				case 3: // pod added
					key := podKey
					p := w.drawPod(t, key)
					w.pods[key], w.history[key] = p, append(w.history[key], p)
					what = "addPod " + describeEventPod(p)
					w.noteUIDMismatch(&reached, p)
					upstreamAddPod(rsc, logger, p)
					podH.OnAdd(p, false)
				case 5, 6, 7, 8: // pod updated
					key := podKey
					old := w.pods[key]
					cur := w.updatePod(t, old)
					w.pods[key], w.history[key] = cur, append(w.history[key], cur)
					what = "updatePod " + describeEventPod(old) + " -> " + describeEventPod(cur)
					w.noteUIDMismatch(&reached, cur)
					upstreamUpdatePod(rsc, logger, old, cur)
					podH.OnUpdate(old, cur)
				case 9: // pod deleted
					key := podKey
					p := w.pods[key]
					delete(w.pods, key)
					var obj interface{} = p
					if rapid.Bool().Draw(t, "podTombstone") {
						// The tombstone's pod may be an older version.
						p = rapid.SampledFrom(w.history[key]).Draw(t, "tombstoneVersion")
						obj = cache.DeletedFinalStateUnknown{Key: key, Obj: p}
					}
					what = fmt.Sprintf("deletePod %T %s", obj, describeEventPod(p))
					if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
						what = "tombstone " + what
					}
					upstreamDeletePod(rsc, logger, obj)
					podH.OnDelete(obj)
				default: // a sync raised expectations
					key := rapid.SampledFrom(eventExpectationKeys).Draw(t, "expectKey")
					if rapid.Bool().Draw(t, "expectCreations") {
						n := rapid.SampledFrom([]int{2, 1, 0, 3}).Draw(t, "adds")
						_ = upExp.ExpectCreations(logger, key, n)
						tr.ExpectCreations(key, n)
						what = fmt.Sprintf("ExpectCreations(%s, %d)", key, n)
					} else {
						podKeys := rapid.SliceOfNDistinct(rapid.SampledFrom(eventPodKeys), 0, 3, rapid.ID[string]).Draw(t, "deletionKeys")
						_ = upExp.ExpectDeletions(logger, key, podKeys)
						tr.ExpectDeletions(key, podKeys)
						what = fmt.Sprintf("ExpectDeletions(%s, %v)", key, podKeys)
					}
				}
				addCases(1)
				up, ours := enqueuedSet(queue.take()), enqueuedSet(ourQueue.take())
				reached.note(what, up)
				if !slices.Equal(up, ours) {
					t.Fatalf("step %d, %s: enqueued %v, upstream %v", step, what, ours, up)
				}
				for _, key := range eventExpectationKeys {
					a, d, found := tr.Pending(key)
					rec, exists, _ := upExp.GetExpectations(key)
					var ua, ud int64
					if exists {
						ua, ud = rec.GetExpectations()
					}
					if podEvent && exists && (ua < prevExp[key][0] || ud < prevExp[key][1]) {
						reached.lowered.Add(1)
					}
					prevExp[key] = [2]int64{ua, ud}
					if found != exists || int64(a) != ua || int64(d) != ud {
						t.Fatalf("step %d, %s: %s expects %d creations, %d deletions (record %v); upstream %d, %d (%v)", step, what, key, a, d, found, ua, ud, exists)
					}
					snap, _ := tr.Snapshot(key)
					upKeys := upExp.GetUIDs(key).List()
					if len(snap.DeletionKeys)+len(upKeys) > 0 && !slices.Equal(snap.DeletionKeys, upKeys) {
						t.Fatalf("step %d, %s: %s expects deletions of %v, upstream %v", step, what, key, snap.DeletionKeys, upKeys)
					}
					if s, us := tr.Satisfied(key), upExp.SatisfiedExpectations(logger, key); s != us {
						t.Fatalf("step %d, %s: %s satisfied %v, upstream %v", step, what, key, s, us)
					}
				}
			}
		})
	})
}

// updateRS draws the next version of a cached ReplicaSet, puts it in the
// cache and returns it: a resync (same object), a new version with changed
// replicas, selector or minReadySeconds, or a new incarnation (deleted and
// recreated under the same name between two events: a new UID).
func (w *eventWorld) updateRS(t *rapid.T, old *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	key := old.Namespace + "/" + old.Name
	var cur *appsv1.ReplicaSet
	switch rapid.IntRange(0, 3).Draw(t, "rsUpdate") {
	case 2:
		cur = old.DeepCopy() // resync
	case 3:
		w.incarn[key]++
		cur = w.drawRS(t, key)
	default:
		cur = w.drawRS(t, key)
		cur.UID = old.UID
	}
	w.rss[key] = cur
	_ = w.rsIndexer.Update(cur)
	return cur
}

// updatePod draws the next version of a pod: a resync (same
// resourceVersion, same pod) or a new version with any of new labels, new
// owner references, a readiness change, a deletion timestamp (kept once
// set).
func (w *eventWorld) updatePod(t *rapid.T, old *corev1.Pod) *corev1.Pod {
	cur := old.DeepCopy()
	if rapid.IntRange(0, 4).Draw(t, "podResync") == 4 {
		return cur
	}
	cur.ResourceVersion = w.nextRV()
	if rapid.IntRange(0, 2).Draw(t, "relabel") == 2 {
		cur.Labels = maps.Clone(rapid.SampledFrom(eventLabels).Draw(t, "labels"))
	}
	if rapid.IntRange(0, 2).Draw(t, "rereference") == 2 {
		cur.OwnerReferences = w.drawRefs(t, cur.Namespace)
	}
	switch rapid.IntRange(0, 3).Draw(t, "readiness") {
	case 3:
		cur.Status.Conditions = readyConditions(t)
	case 0, 1: // readiness flips
		if isReady(cur) {
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		} else {
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(base)}}
		}
	}
	if cur.DeletionTimestamp == nil && rapid.IntRange(0, 4).Draw(t, "markDeleting") == 4 {
		cur.DeletionTimestamp = &metav1.Time{Time: base}
	}
	return cur
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describeEventPod(p *corev1.Pod) string {
	ready := isReady(p)
	var refs []string
	for _, r := range p.OwnerReferences {
		refs = append(refs, fmt.Sprintf("%s/%s/%s/%s/c=%v", r.APIVersion, r.Kind, r.Name, r.UID, r.Controller != nil && *r.Controller))
	}
	return fmt.Sprintf("%s/%s{rv %s labels %v refs %v ready %v deleting %v}", p.Namespace, p.Name, p.ResourceVersion, p.Labels, refs, ready, p.DeletionTimestamp != nil)
}

// eventCorners counts the corners the generator reached, over all checks
// of one run: a differential whose input never reaches them proves little.
type eventCorners struct {
	delayed, multiMatch, lowered, uidMismatch, tombstones atomic.Int64
}

func (c *eventCorners) note(what string, up []enqueued) {
	keys := map[string]bool{}
	for _, e := range up {
		keys[e.key] = true
		if e.after > 0 {
			c.delayed.Add(1)
		}
	}
	if len(keys) >= 2 && strings.Contains(what, "Pod") {
		c.multiMatch.Add(1)
	}
	if strings.Contains(what, "Tombstone") || strings.Contains(what, "tombstone") {
		c.tombstones.Add(1)
	}
}

// noteUIDMismatch counts pods whose controller ref names a cached
// ReplicaSet under another UID (a deleted or recreated one).
func (w *eventWorld) noteUIDMismatch(c *eventCorners, p *corev1.Pod) {
	if r := metav1.GetControllerOfNoCopy(p); r != nil && r.Kind == "ReplicaSet" {
		if rs, ok := w.rss[p.Namespace+"/"+r.Name]; ok && rs.UID != r.UID {
			c.uidMismatch.Add(1)
		}
	}
}

// check fails a run of at least 1000 checks that never reached one of the
// corners (the rarest, a delayed enqueue, comes about once in 10 checks;
// at rapid's default 100 checks a miss would be a flake, so only the counts
// are logged).
func (c *eventCorners) check(t *testing.T) {
	counts := map[string]int64{"delayed enqueue": c.delayed.Load(), "orphan matching several": c.multiMatch.Load(),
		"expectations lowered by a pod event": c.lowered.Load(), "controller ref to another UID": c.uidMismatch.Load(),
		"tombstone": c.tombstones.Load()}
	t.Logf("corners reached: %v", counts)
	if f := flag.Lookup("rapid.checks"); f == nil || f.Value.String() == "" || t.Failed() {
		return
	} else if n, _ := strconv.Atoi(f.Value.String()); n < 1000 || testing.Short() {
		return
	}
	for name, n := range counts {
		if n == 0 {
			t.Errorf("the generator never reached: %s", name)
		}
	}
}

// enqueuedSet sorts and de-duplicates.
func enqueuedSet(e []enqueued) []enqueued {
	e = slices.Clone(e)
	slices.SortFunc(e, func(a, b enqueued) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.after, b.after))
	})
	return slices.Compact(e)
}
