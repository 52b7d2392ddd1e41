package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// worldNS is the one namespace of a shardWorld.
const worldNS = "default"

// worldEpoch is the creation time of a shardWorld's first pod; the next
// ones follow a second apart.
var worldEpoch = time.Unix(1e9-3600, 0)

var (
	worldPods        = schema.GroupResource{Resource: "pods"}
	worldReplicaSets = schema.GroupResource{Group: "apps", Resource: "replicasets"}
)

// shardWorld is the API server, the caches and the event handlers of one
// replica's shard for TestModelShardedNeverRunsAway:
//
//   - ReplicaSets and pods of one namespace, versioned by one counter;
//     pods are created, patched (labels, owner references, with a UID
//     precondition) and deleted at once (no grace period, no finalizer);
//   - the shard's pod cache: the pods the shard's label selector
//     ([Shard.PodSelector]) matches, as the shard's pod informer holds
//     them; a pod that stops matching reaches the handlers as a deletion of
//     its last visible state, as a label-selected watch reports it;
//   - the store of the informer an [Unstamped] reads: the pods
//     [UnstampedSelector] matches; with unstampedLag its changes wait for
//     deliverUnstamped (two watches, in no particular order);
//   - the owner cache: every ReplicaSet, of every shard (WrapCluster
//     filters them).
//
// The caches are always up to date with the API (their version is its
// counter) but for the lagging Unstamped store: what lags, drops and
// duplicates are the shard cache's handler events, queued by every change
// and delivered by deliver. Every write of a shard's pod client is checked
// as it is made (see worldClient); what broke a rule is in violations. It
// does not model other namespaces, relists, failed or lost requests, pod
// phases, nor admission. Safe for concurrent use; the model calls it from
// one goroutine.
type shardWorld struct {
	shard    Shard
	lean     bool            // the caches hold reconcile.LeanPod copies
	inShard  labels.Selector // the shard's pod informer's selector
	noBucket labels.Selector // the Unstamped informer's selector

	mu     sync.Mutex
	rv     int
	seq    int
	owners map[string]*appsv1.ReplicaSet // by name; replaced, never modified
	pods   map[string]*corev1.Pod        // by name
	events []func(*reconcile.Controller[*appsv1.ReplicaSet])

	unstamped       cache.Indexer
	unstampedLag    bool
	unstampedQueue  []func()
	unstampedSynced bool

	created    map[types.UID]int // pods created, by owner UID
	adopted    map[types.UID]int // orphans adopted, by owner UID
	violations []string
}

// worldSelectors are the pod informers' selectors, parsed once: the
// shards' by shard, the Unstamped's under the zero Shard.
var (
	worldSelectorsMu sync.Mutex
	worldSelectors   = map[Shard]labels.Selector{}
)

// worldSelector returns the selector of s's pod informer (the zero Shard:
// the Unstamped's), as the API server parses it.
func worldSelector(s Shard) labels.Selector {
	worldSelectorsMu.Lock()
	defer worldSelectorsMu.Unlock()
	if sel, ok := worldSelectors[s]; ok {
		return sel
	}
	text := s.PodSelector()
	if s == (Shard{}) {
		text = UnstampedSelector()
	}
	sel, err := labels.Parse(text)
	if err != nil || text == "" {
		panic(fmt.Sprintf("the selector %q of %v: %v", text, s, err)) // valid shards only: unreachable
	}
	worldSelectors[s] = sel
	return sel
}

func newShardWorld(s Shard, lean bool) *shardWorld {
	return &shardWorld{
		shard: s, lean: lean, inShard: worldSelector(s), noBucket: worldSelector(Shard{}),
		owners:    map[string]*appsv1.ReplicaSet{},
		pods:      map[string]*corev1.Pod{},
		unstamped: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		created:   map[types.UID]int{},
		adopted:   map[types.UID]int{},
	}
}

// bornLocked gives a new pod its UID and creation time, both in the order
// the pods were made: the Controller names pods at random under
// Config.Expectations.Exact, so that every order the world gives (its
// lists, the actors' choices, the deletion ranking's tie-breaks) follows
// them instead, and a case replays exactly.
func (w *shardWorld) bornLocked(p *corev1.Pod) {
	w.seq++
	p.UID = types.UID(fmt.Sprintf("uid-%04d", w.seq))
	p.CreationTimestamp = metav1.NewTime(worldEpoch.Add(time.Duration(w.seq) * time.Second))
}

func (w *shardWorld) nextRVLocked() string {
	w.rv++
	return strconv.Itoa(w.rv)
}

// version is the caches' version: the API's.
func (w *shardWorld) version() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strconv.Itoa(w.rv)
}

func (w *shardWorld) cached(p *corev1.Pod) *corev1.Pod {
	if w.lean {
		return reconcile.LeanPod(p)
	}
	return p.DeepCopy()
}

// visible reports whether the shard's pod cache holds p (nil: no).
func (w *shardWorld) visible(p *corev1.Pod) bool {
	return p != nil && w.inShard.Matches(labels.Set(p.Labels))
}

// unstampedOf reports whether the Unstamped informer's store holds p.
func (w *shardWorld) unstampedOf(p *corev1.Pod) bool {
	return p != nil && w.noBucket.Matches(labels.Set(p.Labels))
}

// changedLocked queues what the caches see of a pod that changed from old
// to cur (nil: absent).
func (w *shardWorld) changedLocked(old, cur *corev1.Pod) {
	was, is := w.visible(old), w.visible(cur)
	switch {
	case was && is:
		o, n := w.cached(old), w.cached(cur)
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) { c.PodUpdated(o, n) })
	case was && cur == nil:
		gone := w.cached(old)
		now := metav1.Now()
		gone.DeletionTimestamp = &now
		gone.ResourceVersion = strconv.Itoa(w.rv)
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) { c.PodDeleted(gone) })
	case was:
		// A label-selected watch: a deletion carrying the last visible state.
		o := w.cached(old)
		o.ResourceVersion = cur.ResourceVersion
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) { c.PodDeleted(o) })
	case is:
		n := w.cached(cur)
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) { c.PodAdded(n) })
	}

	var op func()
	switch was, is := w.unstampedOf(old), w.unstampedOf(cur); {
	case is:
		n := w.cached(cur)
		op = func() { _ = w.unstamped.Update(n) } // Update adds a missing key
	case was:
		o := w.cached(old)
		op = func() { _ = w.unstamped.Delete(o) }
	default:
		return
	}
	if w.unstampedLag {
		w.unstampedQueue = append(w.unstampedQueue, op)
		return
	}
	op()
}

// seed adds p (named, labelled, owned as given) as if it existed before the
// controller started.
func (w *shardWorld) seed(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p = p.DeepCopy()
	p.Namespace = worldNS
	w.bornLocked(p)
	p.ResourceVersion = w.nextRVLocked()
	w.pods[p.Name] = p
	lag := w.unstampedLag
	w.unstampedLag = false // the informer's first list has them
	w.changedLocked(nil, p)
	w.unstampedLag = lag
	w.events = nil // and so has the shard cache's
}

// setOwner stores rs (a new object, not modified afterwards) at the next
// version.
func (w *shardWorld) setOwner(rs *appsv1.ReplicaSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs.ResourceVersion = w.nextRVLocked()
	w.owners[rs.Name] = rs
}

// relabel is an outside actor's edit of pod name's labels; it reports
// whether the pod exists.
func (w *shardWorld) relabel(name string, edit func(map[string]string)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pods[name]
	if !ok {
		return false
	}
	old := p.DeepCopy()
	p.Labels = maps.Clone(p.Labels)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	edit(p.Labels)
	p.ResourceVersion = w.nextRVLocked()
	w.changedLocked(old, p)
	return true
}

// remove is an outside actor's deletion of pod name; it reports whether
// the pod existed.
func (w *shardWorld) remove(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pods[name]
	if !ok {
		return false
	}
	delete(w.pods, name)
	w.rv++
	w.changedLocked(p, nil)
	return true
}

// pod returns a copy of pod name, nil if there is none.
func (w *shardWorld) pod(name string) *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pods[name]; ok {
		return p.DeepCopy()
	}
	return nil
}

// podNames returns the names of the live pods, in the order they were made.
func (w *shardWorld) podNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, p := range w.podsLocked() {
		out = append(out, p.Name)
	}
	return out
}

// podsLocked returns the live pods in the order they were made.
func (w *shardWorld) podsLocked() []*corev1.Pod {
	out := slices.Collect(maps.Values(w.pods))
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(string(a.UID), string(b.UID)) })
	return out
}

// controlled returns how many live pods uid controls.
func (w *shardWorld) controlled(uid types.UID) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == uid {
			n++
		}
	}
	return n
}

func (w *shardWorld) createdBy(uid types.UID) (created, adopted int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.created[uid], w.adopted[uid]
}

func (w *shardWorld) violation() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.violations) == 0 {
		return ""
	}
	return w.violations[0]
}

// relist replaces the queued events with what a new holder's fresh pod
// informer delivers: an add of every pod the shard's cache holds.
func (w *shardWorld) relist() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = nil
	for _, p := range w.podsLocked() {
		if w.visible(p) {
			n := w.cached(p)
			w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) { c.PodAdded(n) })
		}
	}
}

// deliver hands every queued event to c, oldest first.
func (w *shardWorld) deliver(c *reconcile.Controller[*appsv1.ReplicaSet]) {
	w.mu.Lock()
	events := w.events
	w.events = nil
	w.mu.Unlock()
	for _, ev := range events {
		ev(c)
	}
}

// deliverOne hands the oldest queued event to c.
func (w *shardWorld) deliverOne(c *reconcile.Controller[*appsv1.ReplicaSet]) {
	w.mu.Lock()
	if len(w.events) == 0 {
		w.mu.Unlock()
		return
	}
	ev := w.events[0]
	w.events = w.events[1:]
	w.mu.Unlock()
	ev(c)
}

// dropOne discards the oldest queued event.
func (w *shardWorld) dropOne() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.events) > 0 {
		w.events = w.events[1:]
	}
}

// duplicateOne queues the oldest queued event again.
func (w *shardWorld) duplicateOne() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.events) > 0 {
		w.events = append(w.events, w.events[0])
	}
}

// deliverUnstamped applies the Unstamped store's pending changes and marks
// its first list done.
func (w *shardWorld) deliverUnstamped() {
	w.mu.Lock()
	queue := w.unstampedQueue
	w.unstampedQueue = nil
	w.unstampedSynced = true
	w.mu.Unlock()
	for _, op := range queue {
		op()
	}
}

// List is the shard's pod cache.
func (w *shardWorld) List(namespace string) ([]*corev1.Pod, error) {
	return w.list(namespace, func(*corev1.Pod) bool { return true }), nil
}

func (w *shardWorld) list(namespace string, keep func(*corev1.Pod) bool) []*corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range w.podsLocked() {
		if p.Namespace == namespace && w.visible(p) && keep(p) {
			out = append(out, w.cached(p))
		}
	}
	return out
}

// worldPodsBy is the shard's pod cache with an index by controller.
type worldPodsBy struct{ *shardWorld }

var _ reconcile.PodsByController = worldPodsBy{}

func (w worldPodsBy) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	return w.list(namespace, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref == nil || (ref.Kind == kind && ref.Name == name && ref.UID == uid)
	}), nil
}

// worldOwners is the owner cache: every ReplicaSet, of every shard.
type worldOwners struct{ *shardWorld }

func (w worldOwners) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rs, ok := w.owners[name]; ok && namespace == worldNS {
		return rs, nil
	}
	return nil, apierrors.NewNotFound(worldReplicaSets, name)
}

func (w worldOwners) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*appsv1.ReplicaSet
	for _, name := range slices.Sorted(maps.Keys(w.owners)) {
		if namespace == worldNS {
			out = append(out, w.owners[name])
		}
	}
	return out, nil
}

func (w worldOwners) GetLive(_ context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return w.Get(namespace, name)
}

// worldStatus writes an owner's status; the spec stays the model's.
type worldStatus struct{ *shardWorld }

func (w worldStatus) WriteStatus(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, ok := w.owners[next.Name]
	if !ok || cur.UID != next.UID {
		return nil, apierrors.NewNotFound(worldReplicaSets, next.Name)
	}
	rs := cur.DeepCopy()
	rs.Status = *next.Status.DeepCopy()
	rs.ResourceVersion = w.nextRVLocked()
	w.owners[rs.Name] = rs
	return rs.DeepCopy(), nil
}

// worldClient is the pod client of one holder of the shard (held): its
// writes are the API's, and each is checked as it is made:
//   - a write is made only while held's fence is open;
//   - a pod is created only for an owner of the shard, with the owner's
//     bucket in BucketLabel;
//   - no pod controlled by an owner of another shard is patched or
//     deleted, and no orphan the shard's pod cache does not hold is adopted
//     (a release patch that finds the pod an orphan already, after a stale
//     read, changes nothing and is allowed).
//
// A violation is recorded, and the write is made anyway (the model reports
// the first).
type worldClient struct {
	w    *shardWorld
	held *Held
}

// worldGetter is a worldClient that reads pods live too.
type worldGetter struct{ *worldClient }

var (
	_ reconcile.PodClient = (*worldClient)(nil)
	_ reconcile.PodGetter = worldGetter{}
)

func (c *worldClient) violateLocked(format string, args ...any) {
	c.w.violations = append(c.w.violations, fmt.Sprintf(format, args...))
}

// checkLocked checks a write of pod (the API's copy, nil for a create)
// that verb makes.
func (c *worldClient) checkLocked(verb string, pod *corev1.Pod) {
	if err := c.held.Fence(); err != nil {
		c.violateLocked("%s while the fence refuses: %v", verb, err)
	}
	if pod == nil {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && !c.w.shard.Contains(ref.UID) {
		c.violateLocked("%s pod %s of owner %s, outside shard %v", verb, pod.Name, ref.UID, c.w.shard)
	}
}

func (c *worldClient) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	c.checkLocked("create", nil)
	p := pod.DeepCopy()
	ref := metav1.GetControllerOfNoCopy(p)
	switch {
	case ref == nil:
		c.violateLocked("create of pod %s%s without a controller", p.Name, p.GenerateName)
	case !w.shard.Contains(ref.UID):
		c.violateLocked("create of a pod for owner %s, outside shard %v", ref.UID, w.shard)
	case p.Labels[BucketLabel] != BucketValue(ref.UID):
		c.violateLocked("create of a pod for owner %s with %s=%q, not the owner's bucket %q", ref.UID, BucketLabel, p.Labels[BucketLabel], BucketValue(ref.UID))
	}
	if p.Name == "" {
		p.Name = p.GenerateName + strconv.Itoa(w.seq+1)
	}
	if _, ok := w.pods[p.Name]; ok {
		return nil, apierrors.NewAlreadyExists(worldPods, p.Name)
	}
	w.bornLocked(p)
	p.ResourceVersion = w.nextRVLocked()
	w.pods[p.Name] = p
	if ref != nil {
		w.created[ref.UID]++
	}
	w.changedLocked(nil, p)
	return p.DeepCopy(), nil
}

func (c *worldClient) DeletePod(_ context.Context, pod *corev1.Pod) error {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pods[pod.Name]
	if !ok {
		return apierrors.NewNotFound(worldPods, pod.Name)
	}
	c.checkLocked("delete", p)
	delete(w.pods, pod.Name)
	w.rv++
	w.changedLocked(p, nil)
	return nil
}

// PatchPod applies the patches the controller and Unstamped.Stamp send:
// a UID precondition, labels merged, controller references added or
// deleted ("$patch": "delete").
func (c *worldClient) PatchPod(_ context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pods[pod.Name]
	if !ok {
		return nil, apierrors.NewNotFound(worldPods, pod.Name)
	}
	c.checkLocked("patch", p)
	var patch struct {
		Metadata struct {
			UID             types.UID         `json:"uid"`
			Labels          map[string]string `json:"labels"`
			OwnerReferences []map[string]any  `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if patch.Metadata.UID != "" && patch.Metadata.UID != p.UID {
		return nil, apierrors.NewConflict(worldPods, p.Name, fmt.Errorf("precondition failed: uid %s, pod has %s", patch.Metadata.UID, p.UID))
	}
	old := p.DeepCopy()
	next := p.DeepCopy()
	if len(patch.Metadata.Labels) > 0 {
		if next.Labels == nil {
			next.Labels = map[string]string{}
		}
		maps.Copy(next.Labels, patch.Metadata.Labels)
	}
	for _, r := range patch.Metadata.OwnerReferences {
		uid := types.UID(fmt.Sprint(r["uid"]))
		next.OwnerReferences = slices.DeleteFunc(next.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == uid })
		if r["$patch"] == "delete" {
			continue
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		var ref metav1.OwnerReference
		if err := json.Unmarshal(raw, &ref); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		next.OwnerReferences = append(next.OwnerReferences, ref)
	}
	if metav1.GetControllerOfNoCopy(old) == nil {
		if ref := metav1.GetControllerOfNoCopy(next); ref != nil {
			w.adopted[ref.UID]++
			if !w.visible(old) {
				c.violateLocked("adoption of orphan %s (labels %v), which shard %v's pod cache does not hold", old.Name, old.Labels, w.shard)
			}
		}
	}
	next.ResourceVersion = w.nextRVLocked()
	w.pods[p.Name] = next
	w.changedLocked(old, next)
	return next.DeepCopy(), nil
}

func (c worldGetter) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if p, ok := c.w.pods[name]; ok && namespace == worldNS {
		return p.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(worldPods, name)
}

// storeInformer is the informer an Unstamped reads, over the world's
// store: only the methods Unstamped calls are implemented (the others
// would panic on the nil embedded interface).
type storeInformer struct {
	cache.SharedIndexInformer
	w *shardWorld
}

func (i storeInformer) AddIndexers(indexers cache.Indexers) error {
	return i.w.unstamped.AddIndexers(indexers)
}
func (i storeInformer) GetIndexer() cache.Indexer { return sortedIndexer{i.w.unstamped} }
func (i storeInformer) GetStore() cache.Store     { return sortedIndexer{i.w.unstamped} }
func (i storeInformer) HasSynced() bool {
	i.w.mu.Lock()
	defer i.w.mu.Unlock()
	return i.w.unstampedSynced
}

// sortedIndexer lists in the order the pods were made (by UID), where a
// store lists in map order: so that a case replays exactly.
type sortedIndexer struct{ cache.Indexer }

func (s sortedIndexer) List() []any { return byUID(s.Indexer.List()) }

func (s sortedIndexer) ByIndex(name, value string) ([]any, error) {
	objs, err := s.Indexer.ByIndex(name, value)
	return byUID(objs), err
}

func byUID(objs []any) []any {
	uid := func(o any) string {
		if p, ok := o.(*corev1.Pod); ok {
			return string(p.UID)
		}
		return ""
	}
	slices.SortFunc(objs, func(a, b any) int { return strings.Compare(uid(a), uid(b)) })
	return objs
}
