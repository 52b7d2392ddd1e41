package podrank

import (
	"cmp"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Options selects the variant of upstream's deletion order. The zero value
// is not kube-controller-manager's order: it is upstream's comparison with
// a zero Now, which compares ready and creation times exactly, where
// kube-controller-manager always ranks at the current time and so in
// logarithmic buckets. For its order set Now to the current time (package
// reconcile does, from its Clock); the other fields' zero values are
// upstream's defaults. Options is a plain value, safe to share between
// goroutines.
type Options struct {
	// Now is the instant the logarithmic ready-time and creation-time
	// buckets are measured from. The zero
	// value disables the buckets: times are then compared exactly, the
	// more recent first (afterOrZero, R-6.11), as upstream does with a
	// zero Now. Upstream always uses the wall clock here; callers that
	// want its behaviour pass the current time.
	Now time.Time
	// DisableDeletionCost skips the deletion-cost step, as
	// upstream does with the PodDeletionCost feature gate off. The zero
	// value keeps it, the upstream default.
	DisableDeletionCost bool
	// DisableLogarithmicScaleDown compares ready and creation times
	// exactly (afterOrZero, R-6.11) even when Now is set, as upstream did
	// with the LogarithmicScaleDown gate off (before 1.31). The zero value
	// keeps the buckets, the upstream default.
	DisableLogarithmicScaleDown bool
}

// Ranked is a pod with its colocation rank. A higher rank makes the pod
// delete sooner; [RanksByNode] computes upstream's rank, the
// number of active related pods on the pod's node. A caller may
// supply any other rank, of any size or sign, to add its own criterion at
// that step. The zero Ranked is a nil pod, which [Compare] orders first.
// Ranked is a plain value; the pod it points to is only read.
type Ranked struct {
	Pod  *corev1.Pod // the pod to order; only read
	Rank int         // e.g. active related pods on the same node
}

// Compare orders a and b for deletion: it returns a negative number when
// upstream's ActivePodsWithRanks.Less(a, b) holds ("delete a first"), a
// positive number when Less(b, a) holds, and 0 when neither does (docs/rules.md §6,
// It applies, in order: unscheduled first; phase ordinal
// (Pending and unknown phases 0, Unknown 1, Running 2); not ready first;
// lower deletion cost first; higher rank first; for two ready pods,
// ready-time buckets with a UID tie-break (or afterOrZero); more restarts
// first (regular, then native sidecar); creation-time buckets with a UID
// tie-break (or afterOrZero).
//
// Like upstream, Compare is not a strict weak ordering: two pods
// with exactly equal timestamps skip the UID tie-break that pods in the same
// bucket with different timestamps get, so Compare(a, c) < 0 and
// Compare(c, b) < 0 do not imply Compare(a, b) < 0. It is antisymmetric.
//
// Deviation from upstream, which would panic: a nil Pod compares before
// every non-nil pod (delete first) and equal to another nil Pod.
//
// Compare only reads the pods and is safe for concurrent use.
func Compare(a, b Ranked, opts Options) int {
	switch {
	case a.Pod == nil && b.Pod == nil:
		return 0
	case a.Pod == nil:
		return -1
	case b.Pod == nil:
		return 1
	}
	o := newOrder(opts)
	ka, kb := o.key(a.Pod, a.Rank), o.key(b.Pod, b.Rank)
	return o.compare(&ka, &kb)
}

// order is Options resolved once per call.
type order struct {
	now  time.Time
	cost bool // applies
	log  bool // the buckets apply: the gate is on and Now is set
}

func newOrder(opts Options) order {
	return order{
		now:  opts.Now,
		cost: !opts.DisableDeletionCost,
		log:  !opts.DisableLogarithmicScaleDown && !opts.Now.IsZero(),
	}
}

// key is what the order reads from one pod, read at most once, so that
// ranking many pods does not scan the conditions, look up and parse the
// annotation or take logarithms on every comparison, as upstream does.
//
// It is read in three stages, so that a pod can be passed over as soon as
// what is known of it puts it out of contention (see order.first): head
// reads, fill adds, and tail reads the restart
// counts and creation time only when a comparison gets that far. Few do:
// ready pods rarely share a ready time.
type key struct {
	pod         *corev1.Pod
	readyAt     time.Time // zero unless ready
	rank        int
	cost        int32     // 0 when the step is disabled
	phase       int8
	scheduled   bool
	ready       bool
	readyBucket int8      // for readyAt, if order.log and ready

	tailRead                  bool // the fields below are set
	createdBucket             int8 // for the creation time, if order.log
	restarts, sidecarRestarts int32
}

// head reads the first steps of p's key, R-6.1–.
func head(p *corev1.Pod) key {
	k := key{pod: p, scheduled: p.Spec.NodeName != "", phase: phaseOrdinal(p.Status.Phase)}
	if rc := podutil.ReadyCondition(p); rc != nil && rc.Status == corev1.ConditionTrue {
		k.ready = true
		k.readyAt = rc.LastTransitionTime.Time
	}
	return k
}

// fill adds to a key from head.
func (o *order) fill(k *key, rank int) {
	if o.cost {
		k.cost, _ = DeletionCost(k.pod) // invalid means 0
	}
	k.rank = rank
	if o.log && k.ready {
		k.readyBucket = logBucket(o.now, k.readyAt)
	}
}

// key reads p's key with rank rank, but for its tail.
func (o *order) key(p *corev1.Pod, rank int) key {
	k := head(p)
	o.fill(&k, rank)
	return k
}

// tail reads the rest of k, R-6.7 and, on first use.
func (o *order) tail(k *key) {
	if k.tailRead {
		return
	}
	k.tailRead = true
	k.restarts, k.sidecarRestarts = podutil.MaxRestarts(k.pod)
	if o.log {
		k.createdBucket = logBucket(o.now, k.pod.CreationTimestamp.Time)
	}
}

// phaseOrdinal is: Pending 0, Unknown 1, Running 2, anything else 0.
func phaseOrdinal(ph corev1.PodPhase) int8 {
	switch ph {
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	default:
		return 0
	}
}

// logBucket is: int(math.Log2(float64(now − t))) as upstream
// computes it (so a duration just below 2^k may round up into bucket k),
// and −1 when t is at or after now.
func logBucket(now, t time.Time) int8 {
	d := now.Sub(t)
	if d <= 0 {
		return -1
	}
	// For float64(d) = f·2^e with f in [0.5, 1), math.Log2 returns e−1
	// plus log2(2f), which lies in [0, 1) and truncates away, unless f is
	// so close to 1 that the sum rounds up to e. Only then is the slow
	// logarithm needed (TestPropertyLogBucketMatchesFloat64 checks this).
	if f, e := math.Frexp(float64(d)); f < 1-1.0/(1<<30) {
		return int8(e - 1)
	}
	return int8(math.Log2(float64(d)))
}

// compareHead compares the first steps, R-6.1–, of two keys.
func compareHead(a, b *key) (int, Rule) {
	switch {
	case a.scheduled != b.scheduled: // unscheduled first
		return boolFirst(!a.scheduled), RuleScheduled
	case a.phase != b.phase:
		return cmp.Compare(a.phase, b.phase), RulePhase
	case a.ready != b.ready: // not ready first
		return boolFirst(!a.ready), RuleReady
	}
	return 0, RuleNone
}

// compare is Compare on two keys.
func (o *order) compare(a, b *key) int {
	c, _ := o.decide(a, b)
	return c
}

// headAfter reports whether a's first steps already put it after b.
func headAfter(a, b *key) bool {
	c, _ := compareHead(a, b)
	return c > 0
}

// decide is compare, with the step that decided.
func (o *order) decide(a, b *key) (int, Rule) {
	if c, r := compareHead(a, b); c != 0 {
		return c, r
	}
	if c := cmp.Compare(a.cost, b.cost); c != 0 { // cheaper first
		return c, RuleDeletionCost
	}
	if c := cmp.Compare(b.rank, a.rank); c != 0 { // higher first
		return c, RuleRank
	}
	// once two ready pods' ready times differ, this step decides,
	// even when it answers "equal".
	if a.ready && !a.readyAt.Equal(b.readyAt) {
		return o.compareTimes(a, b, a.readyAt, b.readyAt, a.readyBucket, b.readyBucket), RuleReadyTime
	}
	o.tail(a)
	o.tail(b)
	if c := cmp.Compare(b.restarts, a.restarts); c != 0 { // more first
		return c, RuleRestarts
	}
	if c := cmp.Compare(b.sidecarRestarts, a.sidecarRestarts); c != 0 {
		return c, RuleRestarts
	}
	if ca, cb := a.pod.CreationTimestamp.Time, b.pod.CreationTimestamp.Time; !ca.Equal(cb) {
		return o.compareTimes(a, b, ca, cb, a.createdBucket, b.createdBucket), RuleCreationTime
	}
	return 0, RuleNone
}

// compareTimes is the shared end of for two different
// instants ta and tb of a and b: log buckets with a UID tie-break when
// they apply, else afterOrZero: a zero time first, then the
// later one.
func (o *order) compareTimes(a, b *key, ta, tb time.Time, bucketA, bucketB int8) int {
	if !o.log || ta.IsZero() || tb.IsZero() {
		switch {
		case ta.IsZero():
			return -1 // the times differ, so tb is not zero
		case tb.IsZero():
			return 1
		}
		return boolFirst(ta.After(tb))
	}
	if c := cmp.Compare(bucketA, bucketB); c != 0 {
		return c
	}
	return strings.Compare(string(a.pod.UID), string(b.pod.UID))
}

// boolFirst returns -1 when the first of two differing values goes first,
// 1 otherwise.
func boolFirst(first bool) int {
	if first {
		return -1
	}
	return 1
}
