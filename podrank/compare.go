package podrank

import (
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Options selects the variant of upstream's deletion order. The zero value
// is upstream's default order, except that logarithmic bucketing needs a
// Now. Options is a plain value, safe to share between goroutines.
type Options struct {
	// Now is the instant the logarithmic ready-time and creation-time
	// buckets are measured from (SPEC ). The zero
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
// delete sooner (SPEC ); [RanksByNode] computes upstream's rank, the
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
// positive number when Less(b, a) holds, and 0 when neither does (SPEC §6,
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
	pods := [2]*corev1.Pod{a.Pod, b.Pod}
	c := newConfig(opts, pods[:])
	ka, kb := c.key(0, a.Rank), c.key(1, b.Rank)
	return c.compare(&ka, &kb)
}

// config is Options resolved once per call, and the pods keys point into.
type config struct {
	pods    []*corev1.Pod
	now     time.Time
	nowSec  int64 // now as instant returns it
	nowNsec int32
	nowMono bool
	nowSane bool // nowSec ± 2^32 cannot overflow
	cost    bool // applies
	log     bool // buckets apply (gate on and Now set)
}

func newConfig(opts Options, pods []*corev1.Pod) config {
	c := config{
		pods:    pods,
		now:     opts.Now,
		nowMono: hasMono(opts.Now),
		cost:    !opts.DisableDeletionCost,
		log:     !opts.DisableLogarithmicScaleDown && !opts.Now.IsZero(),
	}
	c.nowSec, c.nowNsec = instant(opts.Now)
	c.nowSane = -1<<62 < c.nowSec && c.nowSec < 1<<62
	return c
}

// key is everything the order reads from one pod, computed at most once:
// 64 bytes without pointers, so a slice of keys is compact and not scanned
// by the garbage collector.
//
// The first steps are packed into head so that most
// comparisons end with one integer comparison; lower sorts first. Times
// are kept as the (seconds since year 1, nanoseconds) pair that
// time.Time.Equal and After compare, except that two times which both
// carry a monotonic clock reading are compared by the time package itself
// (see compareInstants), so the order is exactly time.Time's.
type key struct {
	head          uint64
	rank          int64
	readySec      int64 // ready pods only
	createdSec    int64
	uid           uint64 // the UID's first 8 bytes, see uidPrefix
	readyNsec     int32
	createdNsec   int32
	regular       int32 // this and the created fields are filled by tail
	sidecar       int32
	pos           int32 // index of the pod in config.pods
	readyBucket   int8  // valid when config.log and the time is not zero
	createdBucket int8
	flags         uint8
}

const (
	scheduledBit = 1 << 63 // unscheduled (0) first
	phaseShift   = 61      // two bits of phase ordinal
	readyShift   = 60      // not ready (0) first
	readyBit     = 1 << readyShift
	costShift    = 28               // bits 28–59, the cost with its sign bit flipped
	rankMask     = 1<<costShift - 1 // bits 0–27, rankMask − rank clamped to [0, rankMask]

	readyMono   = 1 << 0 // the ready time carries a monotonic clock reading
	createdMono = 1 << 1
	tailDone    = 1 << 2 // the fields from regular on are filled, see tail
)

// unixToInternal converts Unix seconds to seconds since January 1, year 1,
// the count time.Time compares; the arithmetic wraps as the time
// package's own does, so the conversion is exact for every time.Time.
const unixToInternal = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 86400

// key reads what the first six steps need from c.pods[i], once: its node,
// phase, conditions, cost annotation and UID. tail reads the rest.
//
// It is built in three stages (keyHead, setCost, setRank) because a
// selection can often reject a pod after the first or the second, without
// reading the rest, then, then and the ready
// bucket.
func (c *config) key(i int, rank int) key {
	var k key
	c.keyHead(&k, i)
	c.setCost(&k)
	c.setRank(&k, rank)
	return k
}

// keyHead sets the zero key k to in head and the ready time
// of c.pods[i].
func (c *config) keyHead(k *key, i int) {
	p := c.pods[i]
	k.pos = int32(i)
	if p.Spec.NodeName != "" {
		k.head |= scheduledBit
	}
	k.head |= phaseOrdinal(p.Status.Phase) << phaseShift
	// only the first Ready condition counts, and a ready
	// pod's ready time is that condition's transition time.
	if rc := podutil.ReadyCondition(p); rc != nil && rc.Status == corev1.ConditionTrue {
		k.head |= readyBit
		t := rc.LastTransitionTime.Time
		k.readySec, k.readyNsec = instant(t)
		if hasMono(t) {
			k.flags |= readyMono
		}
	}
}

// setCost adds to a key from keyHead.
func (c *config) setCost(k *key) {
	if !c.cost {
		return
	}
	var cost int32
	if v, ok := c.pods[k.pos].Annotations[DeletionCostAnnotation]; ok {
		cost, _ = costValue(v) // invalid means 0
	}
	k.head |= uint64(uint32(cost)^(1<<31)) << costShift
}

// setRank completes a key from setCost, the ready bucket and the
// UID.
func (c *config) setRank(k *key, rank int) {
	p := c.pods[k.pos]
	k.rank = int64(rank)
	k.head |= rankMask - uint64(min(max(rank, 0), rankMask))
	k.uid = uidPrefix(string(p.UID))
	if k.head&readyBit != 0 && c.log && (k.readySec != 0 || k.readyNsec != 0) {
		d, ok := c.delta(k.readySec, k.readyNsec, k.flags&readyMono != 0)
		if !ok {
			d = c.now.Sub(podutil.ReadyTime(p))
		}
		k.readyBucket = logBucket(d)
	}
}

// tail fills the fields of on first use. Few comparisons
// get that far (most end at the head, the rank or the ready time), and
// reading the container statuses of every pod up front would make the
// key pass a quarter slower; each pod is still read at most once.
func (c *config) tail(k *key) {
	if k.flags&tailDone != 0 {
		return
	}
	p := c.pods[k.pos]
	k.regular, k.sidecar = podutil.MaxRestarts(p)
	t := p.CreationTimestamp.Time
	k.createdSec, k.createdNsec = instant(t)
	mono := hasMono(t)
	if mono {
		k.flags |= createdMono
	}
	if c.log && !t.IsZero() {
		d, ok := c.delta(k.createdSec, k.createdNsec, mono)
		if !ok {
			d = c.now.Sub(t)
		}
		k.createdBucket = logBucket(d)
	}
	k.flags |= tailDone
}

// instant returns what time.Time compares when monotonic readings are
// not involved.
func instant(t time.Time) (sec int64, nsec int32) {
	return t.Unix() + unixToInternal, int32(t.Nanosecond())
}

// hasMono reports whether t carries a monotonic clock reading, which
// Round(0) strips.
func hasMono(t time.Time) bool { return t != t.Round(0) }

// phaseOrdinal is: Pending 0, Unknown 1, Running 2, anything else 0.
func phaseOrdinal(ph corev1.PodPhase) uint64 {
	switch ph {
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	default:
		return 0
	}
}

// delta is Now.Sub(t) for the instant (sec, nsec) of a time t that
// carries a monotonic reading if mono, without Sub's overflow checks. It
// applies when Sub compares wall clocks (not both monotonic readings) and
// they lie within 2^32 s of each other, so that nothing can overflow;
// otherwise ok is false and the caller must call Sub.
func (c *config) delta(sec int64, nsec int32, mono bool) (d time.Duration, ok bool) {
	if !(mono && c.nowMono) && c.nowSane && c.nowSec-1<<32 < sec && sec < c.nowSec+1<<32 {
		return time.Duration(c.nowSec-sec)*time.Second + time.Duration(c.nowNsec-nsec), true
	}
	return 0, false
}

// logBucket is for d = Now − t: ⌊log2(d)⌋ computed through float64
// exactly as upstream does (so a duration just below 2^k may round up into
// bucket k), and −1 when t is at or after Now.
func logBucket(d time.Duration) int8 {
	if d <= 0 {
		return -1
	}
	// math.Log2 returns e + log(f)/ln 2 for float64(d) = f·2^e with f in
	// [0.5, 1); the second term lies in [−1, 0), so the truncated result
	// is e−1 unless that term is so close to 0 that the sum rounds up to e.
	// That needs f within about 2^-46 of 1: only then is the (much
	// slower) logarithm worth taking.
	if f, e := math.Frexp(float64(d)); f < 1-1.0/(1<<30) {
		return int8(e - 1)
	}
	return int8(math.Log2(float64(d)))
}

// compare is Compare on keys built by the same config.
func (c *config) compare(a, b *key) int {
	if a.head != b.head {
		if a.head < b.head {
			return -1
		}
		return 1
	}
	if a.rank != b.rank { // beyond the packed range: higher first
		if a.rank > b.rank {
			return -1
		}
		return 1
	}
	// equal heads mean both or neither are ready. Once the ready
	// times differ, this step decides, even when it answers "equal".
	if a.head&readyBit != 0 {
		if r, differ := c.compareInstants(a, b, true); differ {
			return c.compareTimes(r, a.readyBucket, b.readyBucket, a, b)
		}
	}
	c.tail(a)
	c.tail(b)
	if a.regular != b.regular { // more restarts first
		if a.regular > b.regular {
			return -1
		}
		return 1
	}
	if a.sidecar != b.sidecar {
		if a.sidecar > b.sidecar {
			return -1
		}
		return 1
	}
	if r, differ := c.compareInstants(a, b, false); differ {
		return c.compareTimes(r, a.createdBucket, b.createdBucket, a, b)
	}
	return 0
}

// instantOrder says how two instants relate: which is zero, and
// whether the first is after the second.
type instantOrder struct {
	aZero, bZero bool
	aAfter       bool
}

// compareInstants compares the ready (ready true) or creation times of a
// and b as time.Time's Equal, IsZero and After do. differ is false when
// the instants are equal.
func (c *config) compareInstants(a, b *key, ready bool) (r instantOrder, differ bool) {
	as, an, bs, bn, mono := a.createdSec, a.createdNsec, b.createdSec, b.createdNsec, uint8(createdMono)
	if ready {
		as, an, bs, bn, mono = a.readySec, a.readyNsec, b.readySec, b.readyNsec, readyMono
	}
	r.aZero = as == 0 && an == 0
	r.bZero = bs == 0 && bn == 0
	if a.flags&b.flags&mono != 0 {
		// Both carry monotonic readings, which time.Time compares instead
		// of the wall clock: let it.
		ta, tb := c.time(a, ready), c.time(b, ready)
		r.aAfter = ta.After(tb)
		return r, !ta.Equal(tb)
	}
	r.aAfter = as > bs || (as == bs && an > bn)
	return r, as != bs || an != bn
}

// time re-reads the ready or creation time of k's pod.
func (c *config) time(k *key, ready bool) time.Time {
	if ready {
		return podutil.ReadyTime(c.pods[k.pos])
	}
	return c.pods[k.pos].CreationTimestamp.Time
}

// compareTimes is the shared tail of for two different
// instants: log buckets with a UID tie-break when they apply, else
// afterOrZero.
func (c *config) compareTimes(r instantOrder, ba, bb int8, a, b *key) int {
	if !c.log || r.aZero || r.bZero {
		switch {
		case r.aZero && r.bZero:
			return 0
		case r.aZero:
			return -1 // zero counts as later than anything
		case r.bZero:
			return 1
		case r.aAfter:
			return -1
		default:
			return 1 // the instants differ, so b is after a
		}
	}
	if ba != bb {
		if ba < bb {
			return -1
		}
		return 1
	}
	// Plain string order of the UIDs, decided by the prefixes unless they
	// are equal.
	if a.uid != b.uid {
		if a.uid < b.uid {
			return -1
		}
		return 1
	}
	return strings.Compare(string(c.pods[a.pos].UID), string(c.pods[b.pos].UID))
}

// uidPrefix packs the first 8 bytes of uid big-endian, padded with zero
// bytes. Different prefixes order as the strings do: at the first
// differing byte either both strings have a byte there, or the shorter one
// ended and the other continues with a non-zero byte.
func uidPrefix(uid string) uint64 {
	if len(uid) >= 8 { // the usual case: one load
		return uint64(uid[0])<<56 | uint64(uid[1])<<48 | uint64(uid[2])<<40 | uint64(uid[3])<<32 |
			uint64(uid[4])<<24 | uint64(uid[5])<<16 | uint64(uid[6])<<8 | uint64(uid[7])
	}
	var v uint64
	for i := range 8 {
		v <<= 8
		if i < len(uid) {
			v |= uint64(uid[i])
		}
	}
	return v
}
