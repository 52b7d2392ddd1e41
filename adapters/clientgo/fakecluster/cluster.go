package fakecluster

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Faults are the rates (0 to 1) at which the cluster fails requests. The zero
// value injects nothing. Failed requests change nothing unless stated.
type Faults struct {
	// CreatePod fails pod creates with 500 Internal Error.
	CreatePod float64
	// CreatePodLost stores the pod but answers the create with a server
	// timeout, as when a response is lost: the caller cannot tell it worked.
	CreatePodLost float64
	// DeletePod fails pod deletes with 500 Internal Error. The kubelet's
	// final removal of a terminating pod (grace period 0) is never failed.
	DeletePod float64
	// UpdateStatus fails ReplicaSet status updates with 500 Internal Error.
	UpdateStatus float64
}

// Stats counts what the cluster did. Read it with [Cluster.Stats].
type Stats struct {
	PodsCreated     int // pods stored (including CreatePodLost ones)
	PodsDeleted     int // pods removed from storage
	PodsTerminating int // graceful deletions started
	StatusUpdates   int // successful ReplicaSet status updates
	Conflicts       int // updates refused for a stale resourceVersion or uid
	FaultsInjected  int // requests failed on purpose (all kinds)
	WatchWaits      int // writes that waited for a slow watcher
}

// Cluster is the in-process API server. Create it with [New]; it is safe for
// concurrent use. Its Clientset is what controllers and the kubelet talk to.
type Cluster struct {
	// Clientset is the client-go fake clientset with this cluster's reactors.
	Clientset *fake.Clientset

	tracker k8stesting.ObjectTracker
	now     func() time.Time

	mu       sync.Mutex // guards everything below
	rng      *rand.Rand
	faults   Faults
	versions map[schema.GroupVersionResource]int64
	watchers []*watch.RaceFreeFakeWatcher
	history  map[schema.GroupVersionResource]*history
	stats    Stats
}

// New returns an empty cluster whose random choices (names, UIDs, faults)
// are drawn from seed.
func New(seed uint64, faults Faults) *Cluster {
	cs := fake.NewSimpleClientset()
	c := &Cluster{
		Clientset: cs,
		tracker:   cs.Tracker(),
		now:       time.Now,
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		faults:    faults,
		versions:  map[schema.GroupVersionResource]int64{},
		history:   map[schema.GroupVersionResource]*history{},
	}
	cs.PrependReactor("*", "*", c.react)
	cs.PrependWatchReactor("*", c.watch)
	return c
}

// SetFaults replaces the fault rates.
func (c *Cluster) SetFaults(f Faults) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = f
}

// Stats returns a snapshot of the counters.
func (c *Cluster) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// ClearActions forgets the actions the fake clientset recorded (it keeps a
// copy of every request, which grows without bound in a long run).
func (c *Cluster) ClearActions() { c.Clientset.ClearActions() }

var (
	podsResource        = corev1.SchemeGroupVersion.WithResource("pods")
	replicaSetsResource = appsv1.SchemeGroupVersion.WithResource("replicasets")
)

// react handles every write and list; gets fall through to the default
// tracker reaction. The fake clientset calls reactors under its own lock, so writes
// are serialized and resourceVersions are handed out in watch order.
func (c *Cluster) react(action k8stesting.Action) (bool, runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch a := action.(type) {
	case k8stesting.CreateActionImpl:
		if a.GetSubresource() != "" {
			return false, nil, nil
		}
		obj, err := c.create(a)
		return true, obj, err
	case k8stesting.UpdateActionImpl:
		obj, err := c.update(a.GetResource(), a.GetNamespace(), a.GetSubresource(), a.GetObject().DeepCopyObject())
		return true, obj, err
	case k8stesting.PatchActionImpl:
		obj, err := c.patch(a)
		return true, obj, err
	case k8stesting.DeleteActionImpl:
		return true, nil, c.delete(a)
	case k8stesting.ListActionImpl:
		obj, err := c.list(a)
		return true, obj, err
	default:
		return false, nil, nil
	}
}

// watch starts a watch the way an API server's watch cache does: from the
// requested resourceVersion, every later write is replayed in version order
// (modifications and removals included) before live events follow; with no
// version, the current objects are sent as ADDED (the tracker's replay). A version
// older than the retained history fails with 410 Gone, so a reflector
// relists. (The tracker's own replay sends only the objects that still exist,
// as ADDED, in name order: a watch started after writes that followed its
// list saw versions out of order and missed removals.)
func (c *Cluster) watch(action k8stesting.Action) (bool, watch.Interface, error) {
	a, ok := action.(k8stesting.WatchActionImpl)
	if !ok {
		return false, nil, nil
	}
	gvr, ns := a.GetResource(), a.GetNamespace()
	c.mu.Lock()
	defer c.mu.Unlock()
	sel := c.selection(gvr, ns, a.GetWatchRestrictions().Labels)
	rv := a.ListOptions.ResourceVersion
	if rv == "" || rv == "0" {
		// "Start at most recent": the tracker sends the current objects.
		w, err := c.tracker.Watch(gvr, ns, a.ListOptions)
		rf, ok := w.(*watch.RaceFreeFakeWatcher)
		if !ok {
			return true, w, err
		}
		c.watchers = append(c.watchers, rf)
		if sel == nil {
			return true, w, err
		}
		return true, newReplayWatcher(nil, rf, sel), err
	}
	from, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return true, nil, apierrors.NewBadRequest(fmt.Sprintf("cluster: invalid resourceVersion %q", rv))
	}
	var replay []historyEvent
	if h := c.history[gvr]; h != nil {
		if from < h.floor {
			return true, nil, apierrors.NewResourceExpired(fmt.Sprintf("cluster: resourceVersion %d is older than the retained history (%d)", from, h.floor))
		}
		for _, e := range h.events {
			if e.rv > from && (ns == "" || e.ns == ns) {
				replay = append(replay, e)
			}
		}
	}
	w, err := c.tracker.Watch(gvr, ns) // no options: the tracker replays nothing
	if err != nil {
		return true, nil, err
	}
	rf, ok := w.(*watch.RaceFreeFakeWatcher)
	if !ok {
		return true, w, nil
	}
	c.watchers = append(c.watchers, rf)
	return true, newReplayWatcher(replay, rf, sel), nil
}

// historySize is how many writes per resource a watch can be replayed from
// (a variable so that tests can lower it).
var historySize = 4096

// replayWatcher sends the replayed events, then the live events of the
// tracker's watcher, through sel when the watch selects by label (nil: all
// of them as they are). It buffers nothing itself: live events wait in the
// tracker watcher's buffer, which awaitWatchers keeps from overflowing.
type replayWatcher struct {
	inner *watch.RaceFreeFakeWatcher
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func newReplayWatcher(replay []historyEvent, inner *watch.RaceFreeFakeWatcher, sel *selection) *replayWatcher {
	w := &replayWatcher{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		for _, e := range replay {
			ev, ok := watch.Event{Type: e.typ, Object: e.obj.DeepCopyObject()}, true
			if sel != nil {
				ev, ok = sel.replayed(e)
			}
			if !ok {
				continue
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
		in := inner.ResultChan()
		for {
			select {
			case e, ok := <-in:
				if !ok {
					return
				}
				if sel != nil {
					if e, ok = sel.live(e); !ok {
						continue
					}
				}
				select {
				case w.out <- e:
				case <-w.stop:
					return
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

// ResultChan implements watch.Interface.
func (w *replayWatcher) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface; it may be called more than once.
func (w *replayWatcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

type historyEvent struct {
	rv   int64
	typ  watch.EventType
	ns   string
	obj  runtime.Object
	prev runtime.Object // the object before the write; nil for a create
}

// history is the retained tail of one resource's writes.
type history struct {
	floor  int64 // a watch from a version below floor has lost events
	events []historyEvent
}

// record appends a successful write of gvr that turned prev (nil: none)
// into obj (neither is retained; copies are).
func (c *Cluster) record(gvr schema.GroupVersionResource, typ watch.EventType, obj, prev runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	h := c.history[gvr]
	if h == nil {
		h = &history{}
		c.history[gvr] = h
	}
	ev := historyEvent{rv: rv, typ: typ, ns: m.GetNamespace(), obj: obj.DeepCopyObject()}
	if prev != nil {
		ev.prev = prev.DeepCopyObject()
	}
	h.events = append(h.events, ev)
	if n := len(h.events) - historySize; n > 0 {
		h.floor = h.events[n-1].rv
		clear(h.events[:n])
		h.events = append(h.events[:0], h.events[n:]...)
	}
}

// fault reports whether to fail a request that fails at the given rate.
func (c *Cluster) fault(rate float64) bool {
	if rate <= 0 || c.rng.Float64() >= rate {
		return false
	}
	c.stats.FaultsInjected++
	return true
}

// list lists from the tracker and stamps the list with gvr's latest
// version, as an API server does, so that a reflector watches from it. The
// tracker does that itself from client-go v0.36; older trackers leave it
// empty.
func (c *Cluster) list(a k8stesting.ListActionImpl) (runtime.Object, error) {
	gvr := a.GetResource()
	obj, err := c.tracker.List(gvr, a.GetKind(), a.GetNamespace(), a.ListOptions)
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, err
	}
	lm.SetResourceVersion(strconv.FormatInt(c.nextVersion(gvr)-1, 10))
	return obj, nil
}

// nextVersion returns the resourceVersion the tracker will give the next
// write of gvr; commit it with c.versions[gvr] = v once the write succeeded.
func (c *Cluster) nextVersion(gvr schema.GroupVersionResource) int64 {
	v, ok := c.versions[gvr]
	if !ok {
		v = 1 // the tracker's starting point for an empty resource
	}
	return v + 1
}

// awaitWatchers blocks while some live watcher's buffer is nearly full, so
// the write about to happen cannot overflow it.
func (c *Cluster) awaitWatchers() error {
	live := c.watchers[:0]
	for _, w := range c.watchers {
		if !w.IsStopped() {
			live = append(live, w)
		}
	}
	clear(c.watchers[len(live):])
	c.watchers = live
	deadline := time.Now().Add(10 * time.Second)
	waited := false
	for _, w := range c.watchers {
		ch := w.ResultChan()
		for !w.IsStopped() && len(ch) >= cap(ch)-4 {
			if time.Now().After(deadline) {
				return apierrors.NewServiceUnavailable("cluster: a watcher is not consuming its events")
			}
			waited = true
			time.Sleep(100 * time.Microsecond)
		}
	}
	if waited {
		c.stats.WatchWaits++
	}
	return nil
}

const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func (c *Cluster) create(a k8stesting.CreateActionImpl) (runtime.Object, error) {
	gvr := a.GetResource()
	obj := a.GetObject().DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	isPod := gvr == podsResource
	if isPod && c.fault(c.faults.CreatePod) {
		return nil, apierrors.NewInternalError(fmt.Errorf("injected fault: create pod"))
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(a.GetNamespace())
	}
	if m.GetName() == "" {
		if m.GetGenerateName() == "" {
			return nil, apierrors.NewBadRequest("cluster: name or generateName is required")
		}
		name, err := c.generateName(gvr, m.GetNamespace(), m.GetGenerateName())
		if err != nil {
			return nil, err
		}
		m.SetName(name)
	}
	if m.GetUID() == "" {
		m.SetUID(c.newUID())
	}
	if ts := m.GetCreationTimestamp(); ts.IsZero() {
		m.SetCreationTimestamp(metav1.NewTime(c.now()))
	}
	m.SetGeneration(1)
	if pod, ok := obj.(*corev1.Pod); ok && pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending // the API server's default
	}
	v := c.nextVersion(gvr)
	m.SetResourceVersion(strconv.FormatInt(v, 10))
	if err := c.awaitWatchers(); err != nil {
		return nil, err
	}
	if err := c.tracker.Create(gvr, obj, m.GetNamespace()); err != nil {
		return nil, err
	}
	c.versions[gvr] = v
	c.record(gvr, watch.Added, obj, nil)
	if isPod {
		c.stats.PodsCreated++
		if c.fault(c.faults.CreatePodLost) {
			return nil, apierrors.NewServerTimeout(gvr.GroupResource(), "create", 1)
		}
	}
	return obj.DeepCopyObject(), nil
}

func (c *Cluster) generateName(gvr schema.GroupVersionResource, ns, prefix string) (string, error) {
	for range 16 {
		b := []byte(prefix)
		for range 5 {
			b = append(b, nameAlphabet[c.rng.IntN(len(nameAlphabet))])
		}
		name := string(b)
		if _, err := c.tracker.Get(gvr, ns, name); apierrors.IsNotFound(err) {
			return name, nil
		}
	}
	return "", apierrors.NewAlreadyExists(gvr.GroupResource(), prefix+"*****")
}

func (c *Cluster) newUID() types.UID {
	hi, lo := c.rng.Uint64(), c.rng.Uint64()
	return types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x",
		hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff))
}

// update stores obj (already a private copy) as the new state of an existing
// object, applying subresource semantics, the resourceVersion precondition
// and the generation bump.
func (c *Cluster) update(gvr schema.GroupVersionResource, ns, sub string, obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if ns == "" {
		ns = m.GetNamespace()
	}
	stored, err := c.tracker.Get(gvr, ns, m.GetName())
	if err != nil {
		return nil, err
	}
	sm, err := meta.Accessor(stored)
	if err != nil {
		return nil, err
	}
	if rv := m.GetResourceVersion(); rv != "" && rv != sm.GetResourceVersion() {
		c.stats.Conflicts++
		return nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if uid := m.GetUID(); uid != "" && uid != sm.GetUID() {
		c.stats.Conflicts++
		return nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(), fmt.Errorf("precondition failed: uid %s", uid))
	}
	if gvr == replicaSetsResource && sub == "status" && c.fault(c.faults.UpdateStatus) {
		return nil, apierrors.NewInternalError(fmt.Errorf("injected fault: update replicaset status"))
	}
	obj = mergeSubresource(stored, obj, sub)
	m, _ = meta.Accessor(obj)
	m.SetUID(sm.GetUID())
	m.SetCreationTimestamp(sm.GetCreationTimestamp())
	if sm.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(sm.GetDeletionTimestamp())
		m.SetDeletionGracePeriodSeconds(sm.GetDeletionGracePeriodSeconds())
	}
	v := c.nextVersion(gvr)
	m.SetResourceVersion(strconv.FormatInt(v, 10))
	if err := c.awaitWatchers(); err != nil {
		return nil, err
	}
	if err := c.tracker.Update(gvr, obj, ns); err != nil {
		return nil, err
	}
	c.versions[gvr] = v
	c.record(gvr, watch.Modified, obj, stored)
	if gvr == replicaSetsResource && sub == "status" {
		c.stats.StatusUpdates++
	}
	return obj.DeepCopyObject(), nil
}

// mergeSubresource returns what an API server would store when obj is
// written to the given subresource of stored: "status" changes only the
// status, the main resource keeps the stored status. A ReplicaSet spec change
// bumps the generation.
func mergeSubresource(stored, obj runtime.Object, sub string) runtime.Object {
	switch s := stored.(type) {
	case *corev1.Pod:
		o := obj.(*corev1.Pod)
		if sub == "status" {
			res := s.DeepCopy()
			res.Status = o.Status
			return res
		}
		o.Status = s.Status
		return o
	case *appsv1.ReplicaSet:
		o := obj.(*appsv1.ReplicaSet)
		if sub == "status" {
			res := s.DeepCopy()
			res.Status = o.Status
			return res
		}
		o.Status = s.Status
		o.Generation = s.Generation
		if !equality.Semantic.DeepEqual(s.Spec, o.Spec) {
			o.Generation++
		}
		return o
	}
	return obj
}

func (c *Cluster) patch(a k8stesting.PatchActionImpl) (runtime.Object, error) {
	gvr, ns := a.GetResource(), a.GetNamespace()
	stored, err := c.tracker.Get(gvr, ns, a.GetName())
	if err != nil {
		return nil, err
	}
	old, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch a.GetPatchType() {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(a.GetPatch())
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		patched, err = p.Apply(old)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(old, a.GetPatch())
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(old, a.GetPatch(), stored)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cluster: patch type %q is not supported", a.GetPatchType()))
	}
	obj := reflect.New(reflect.TypeOf(stored).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(patched, obj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// A patch carries its preconditions in the patched metadata: a uid or
	// resourceVersion that differs from the stored one is a conflict, which
	// update checks. Without them the patch applies to the latest version.
	return c.update(gvr, ns, a.GetSubresource(), obj)
}

func (c *Cluster) delete(a k8stesting.DeleteActionImpl) error {
	gvr, ns, name := a.GetResource(), a.GetNamespace(), a.GetName()
	opts := a.GetDeleteOptions()
	stored, err := c.tracker.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	sm, err := meta.Accessor(stored)
	if err != nil {
		return err
	}
	if p := opts.Preconditions; p != nil {
		if (p.UID != nil && *p.UID != sm.GetUID()) || (p.ResourceVersion != nil && *p.ResourceVersion != sm.GetResourceVersion()) {
			c.stats.Conflicts++
			return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("precondition failed"))
		}
	}
	force := opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds == 0
	pod, isPod := stored.(*corev1.Pod)
	if isPod && !force && c.fault(c.faults.DeletePod) {
		return apierrors.NewInternalError(fmt.Errorf("injected fault: delete pod"))
	}
	if isPod && !force && pod.Spec.NodeName != "" {
		// Graceful deletion: the kubelet finishes it.
		if pod.DeletionTimestamp != nil {
			return nil
		}
		p := pod.DeepCopy()
		grace := int64(30)
		if opts.GracePeriodSeconds != nil {
			grace = *opts.GracePeriodSeconds
		} else if p.Spec.TerminationGracePeriodSeconds != nil {
			grace = *p.Spec.TerminationGracePeriodSeconds
		}
		now := metav1.NewTime(c.now())
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
		if err := c.store(gvr, ns, p); err != nil {
			return err
		}
		c.stats.PodsTerminating++
		return nil
	}
	// Removal: first a MODIFIED event with a fresh resourceVersion (the
	// tracker's DELETED event carries the stored one, which may be older than
	// what watchers have already seen), then the removal itself.
	obj := stored.DeepCopyObject()
	om, _ := meta.Accessor(obj)
	if om.GetDeletionTimestamp() == nil {
		now := metav1.NewTime(c.now())
		var zero int64
		om.SetDeletionTimestamp(&now)
		om.SetDeletionGracePeriodSeconds(&zero)
	}
	if err := c.store(gvr, ns, obj); err != nil {
		return err
	}
	if err := c.awaitWatchers(); err != nil {
		return err
	}
	if err := c.tracker.Delete(gvr, ns, name); err != nil {
		return err
	}
	c.record(gvr, watch.Deleted, obj, obj)
	if isPod {
		c.stats.PodsDeleted++
	}
	return nil
}

// store writes obj over the stored object with a fresh resourceVersion and
// no preconditions.
func (c *Cluster) store(gvr schema.GroupVersionResource, ns string, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	prev, err := c.tracker.Get(gvr, ns, m.GetName())
	if err != nil {
		return err
	}
	v := c.nextVersion(gvr)
	m.SetResourceVersion(strconv.FormatInt(v, 10))
	if err := c.awaitWatchers(); err != nil {
		return err
	}
	if err := c.tracker.Update(gvr, obj, ns); err != nil {
		return err
	}
	c.versions[gvr] = v
	c.record(gvr, watch.Modified, obj, prev)
	return nil
}
