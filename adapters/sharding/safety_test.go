package sharding

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// reconcile's TestModelNeverRunsAway (issue 40: bad input never panics,
// never corrupts and never runs away) with sharding as one more dimension
// a real reconcile.Controller of ReplicaSets whose
// Cluster is WrapCluster's for one held shard, over shardWorld. Each case
// draws:
//   - the shards: K from 1 to 16 and the shard held;
//   - one to three owners, the first of the shard, the others of it or of
//     another shard, each with its replicas, a template whose labels may
//     carry BucketLabel (the owner's bucket, another bucket, or a value
//     that is no bucket), a selector that may require the bucket or
//     exclude it (DoesNotExist, NotIn its bucket, In its bucket, In
//     another), and pods it had before: without the bucket label (made
//     before sharding) and with it (made by an earlier holder); and maybe
//     an orphan that the first owner's selector may match, without the
//     bucket label, with a bucket of the shard or with one of another
//     shard;
//   - Config.Expectations.Exact on or off, cache versions supplied or not,
//     the TTL, the burst, a pod client that reads pods live or not, a pod
//     cache indexed by controller or not, lean pods, an Unstamped (none,
//     one in step with the API, one whose store lags; listed at the start
//     or later), the hand-over's resume version (none, reached, ahead of
//     the caches);
//   - the environment: syncs of any owner; the shard cache's events
//     delivered late, dropped or duplicated; the fence closing (the clock
//     passes RenewDeadline, the shard is lost) and reopening (a renewal);
//     the shard handed over to a new holder (a new Held resuming from the
//     old one's writes and a new Controller on caches listed afresh), the
//     old Controller syncing on behind its closed fence; Unstamped.Stamp;
//     scale changes; and outside actors that delete pods, change their app
//     label, and remove, garble or change their bucket label.
//
// After every step it checks:
//   - (a) the pods created for an owner never exceed the replicas it was
//     asked for (the first replicas and every increase) plus its
//     departures: the pods an outside actor made leave what the shard
//     counts as the owner's (deleted; relabelled so that its selector no
//     longer matches; out of the shard's pod cache and not listed by an
//     Unstamped in step with the API; with a pod client that reads pods
//     live such a pod is stamped back rather than replaced, so this is an
//     upper bound);
//   - (b) the live pods an owner controls never exceed the more of the
//     most replicas it was asked for and the pods it had that the shard
//     counts, plus the pods it had that the shard cannot count (no bucket
//     label and no Unstamped, or not matched by its selector), the orphans
//     it adopted and its departures;
//   - (c) no pod is created for an owner of another shard, nor for one
//     whose spec is invalid once the bucket is part of the stamp:
//     its template sets BucketLabel to another value, or its selector does
//     not match the template's labels with the owner's bucket;
//   - (d) every write of a holder's pod client is made while that holder's
//     fence is open; every pod created carries its owner's bucket; no pod
//     of another shard's owner is patched or deleted; no orphan the shard's
//     pod cache does not hold is adopted (worldClient);
//   - (e) a sync of another shard's owner manages nothing and fails only
//     deferred; a sync that deleted created pods its owner's selector does
//     not match ends terminal, or fenced.
//
// No step may panic. What it does not cover: requests that fail or are
// lost, caches behind the API (only the Unstamped's store lags, so the
// hand-over's resume version defers syncs only while it is ahead of the
// API itself), more than one replica at a time and a change of K. An
// orphan that carries another bucket of the shard is adopted, with its
// owner's bucket (TestAnAdoptedOrphanTakesItsOwnersBucket), and counted in
// (b).

const (
	// shardSafetyCases is the least number of cases `go test` runs
	// (a tenth with -short); -shardsafety.cases raises it (make soak runs
	// ten times as many).
	shardSafetyCases = 6_000
	// shardSafetyMaxSteps bounds the steps of a case.
	shardSafetyMaxSteps = 30
	// safetyWindow is the held shard's RenewDeadline.
	safetyWindow = 10 * time.Second
)

var shardSafetyCasesFlag = flag.Int("shardsafety.cases", shardSafetyCases, "TestModelShardedNeverRunsAway: the least number of cases to run")

// safetySelector is an owner's selector, relative to its bucket.
type safetySelector int

const (
	selPlain       safetySelector = iota // app=<owner>
	selBucketNone                        // and BucketLabel DoesNotExist
	selBucketNotIn                       // and BucketLabel NotIn (its bucket)
	selBucketIn                          // and BucketLabel In (its bucket)
	selBucketOther                       // and BucketLabel In (another bucket)
)

var safetySelectorNames = []string{"plain", "bucket DoesNotExist", "bucket NotIn its own", "bucket In its own", "bucket In another"}

// safetyTemplate is BucketLabel on an owner's template.
type safetyTemplate int

const (
	tmplNone    safetyTemplate = iota // no BucketLabel
	tmplOwn                           // the owner's bucket
	tmplOther                         // another bucket
	tmplGarbled                       // a value that is no bucket
)

var safetyTemplateNames = []string{"none", "own", "another bucket", "garbled"}

// garbledBuckets are label values that are no bucket.
var garbledBuckets = []string{"", "zz", "1", "0a1", "A0", "100"}

// otherBucket returns a bucket value other than the one of uid.
func otherBucket(uid types.UID) string {
	return bucketValue((Bucket(uid) + 1) % Buckets)
}

// safetyOwner is one owner and what the model knows of it.
type safetyOwner struct {
	rs       *appsv1.ReplicaSet
	sel      labels.Selector // rs's selector, which never changes
	inShard  bool
	selector safetySelector
	template safetyTemplate

	seeded      int // pods it controlled before the controller started that the shard counts
	hidden      int // pods it controlled before the controller started that the shard cannot count
	asked       int // the first replicas and every increase
	maxAsked    int // the most replicas asked
	departures  int // pods that left the shard's view for reasons outside the controller
	generations int // specs set, the first included
}

func (o *safetyOwner) String() string {
	return fmt.Sprintf("{%s uid %s bucket %s in shard %v, replicas %d, selector %s, template bucket %s, seeded %d, hidden %d}",
		o.rs.Name, o.rs.UID, BucketValue(o.rs.UID), o.inShard, *o.rs.Spec.Replicas,
		safetySelectorNames[o.selector], safetyTemplateNames[o.template], o.seeded, o.hidden)
}

func (o *safetyOwner) key() string { return reconcile.OwnerKey(worldNS, o.rs.Name) }

// creates reports whether the owner's pods can be created at all: its
// template sets no other bucket and its selector matches the template's
// labels with the owner's bucket, which WrapCluster's pod client stamps
// (else the spec is invalid, R-14.3).
func (o *safetyOwner) creates() bool {
	if o.template == tmplOther || o.template == tmplGarbled {
		return false
	}
	stamped := maps.Clone(o.rs.Spec.Template.Labels)
	stamped[BucketLabel] = BucketValue(o.rs.UID)
	return o.matches(stamped)
}

func (o *safetyOwner) matches(l map[string]string) bool {
	return o.sel.Matches(labels.Set(l))
}

// safetyHolder is one holder of the shard: its Held, its Controller over
// WrapCluster and its pod client.
type safetyHolder struct {
	h      *Held
	ctrl   *reconcile.Controller[*appsv1.ReplicaSet]
	client reconcile.PodClient // the world's, unwrapped (Unstamped.Stamp's)
}

// shardSafetyCase is the drawn configuration.
type shardSafetyCase struct {
	shard        Shard
	exact        bool
	versions     bool
	getter       bool
	byController bool
	lean         bool
	unstamped    int // 0 none, 1 in step, 2 lagging
	listed       bool
	resume       int // 0 none, 1 reached, 2 ahead
	ttl          time.Duration
	burst        int
}

func (c shardSafetyCase) String() string {
	return fmt.Sprintf("{shard %v, exact %v, versions %v, getter %v, byController %v, lean %v, unstamped %s, listed %v, resume %s, ttl %v, burst %d}",
		c.shard, c.exact, c.versions, c.getter, c.byController, c.lean,
		[]string{"none", "in step", "lagging"}[c.unstamped], c.listed,
		[]string{"none", "reached", "ahead"}[c.resume], c.ttl, c.burst)
}

// shardSafety is one case.
type shardSafety struct {
	ctx     context.Context
	cfg     shardSafetyCase
	clock   *clocktesting.FakeClock
	w       *shardWorld
	u       *Unstamped
	owners  []*safetyOwner
	cur     *safetyHolder
	retired []*safetyHolder // earlier holders, their fences closed
}

var shardSafetyActions = []string{
	"sync", "sync", "sync", "sync", "sync", "sync", "deliver", "deliver", "deliverOne", "drop", "duplicate",
	"scale", "delete", "relabel", "strip", "garble", "rebucket", "stamp", "deliverUnstamped",
	"clock", "renew", "lose", "handover", "syncRetired",
}

// TestModelShardedNeverRunsAway runs the property in at least
// -shardsafety.cases cases (shardSafetyCases by default), in rounds of
// -rapid.checks cases.
func TestModelShardedNeverRunsAway(t *testing.T) {
	per := 100
	if f := flag.Lookup("rapid.checks"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
			per = v
		}
	}
	n := max(*shardSafetyCasesFlag, 1)
	if testing.Short() {
		n = max(n/10, 1)
	}
	for round := range (n + per - 1) / per {
		t.Run("round"+strconv.Itoa(round), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				m := newShardSafety(t)
				for range rapid.IntRange(1, shardSafetyMaxSteps).Draw(t, "steps") {
					m.step(t, rapid.SampledFrom(shardSafetyActions).Draw(t, "action"))
					m.check(t)
				}
			})
		})
	}
}

func drawShardSafetyCase(t *rapid.T) shardSafetyCase {
	count := rapid.IntRange(1, 16).Draw(t, "K")
	c := shardSafetyCase{
		shard:        Shard{Index: rapid.IntRange(0, count-1).Draw(t, "shard"), Count: count},
		exact:        rapid.Bool().Draw(t, "exact"),
		versions:     rapid.Bool().Draw(t, "versions"),
		getter:       rapid.Bool().Draw(t, "getter"),
		byController: rapid.Bool().Draw(t, "byController"),
		lean:         rapid.Bool().Draw(t, "lean"),
		unstamped:    rapid.IntRange(0, 2).Draw(t, "unstamped"),
		listed:       rapid.SampledFrom([]bool{true, true, true, false}).Draw(t, "unstampedListed"),
		resume:       rapid.SampledFrom([]int{0, 0, 1, 1, 2}).Draw(t, "resume"),
		ttl:          rapid.SampledFrom([]time.Duration{0, 30 * time.Second}).Draw(t, "ttl"),
		burst:        rapid.IntRange(1, 4).Draw(t, "burst"),
	}
	c.versions = c.versions || c.exact
	return c
}

// drawOwnerUID returns a UID of the shard (in) or of another shard, not
// among taken.
func drawOwnerUID(t *rapid.T, s Shard, in bool, taken map[types.UID]bool, label string) types.UID {
	for i := rapid.IntRange(0, 999).Draw(t, label); ; i++ {
		uid := types.UID("rs-uid-" + strconv.Itoa(i))
		if s.Contains(uid) == in && !taken[uid] {
			return uid
		}
	}
}

func newShardSafety(t *rapid.T) *shardSafety {
	cc := drawShardSafetyCase(t)
	m := &shardSafety{ctx: context.Background(), cfg: cc, clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))}
	m.w = newShardWorld(cc.shard, cc.lean)
	if cc.unstamped > 0 {
		u, err := NewUnstamped(storeInformer{w: m.w})
		if err != nil {
			t.Fatalf("NewUnstamped: %v", err)
		}
		m.u = u
		m.w.unstampedSynced = cc.listed
		m.w.unstampedLag = cc.unstamped == 2
	}

	taken := map[types.UID]bool{}
	for i := range rapid.IntRange(1, 3).Draw(t, "owners") {
		in := i == 0 || cc.shard.Count == 1 || rapid.Bool().Draw(t, "ownerInShard")
		uid := drawOwnerUID(t, cc.shard, in, taken, "ownerUID")
		taken[uid] = true
		o := &safetyOwner{
			inShard:  in,
			selector: safetySelector(rapid.SampledFrom([]int{0, 0, 0, 0, 0, 0, 1, 2, 3, 4}).Draw(t, "selector")),
			template: safetyTemplate(rapid.SampledFrom([]int{0, 0, 0, 0, 0, 1, 2, 3}).Draw(t, "template")),
		}
		o.rs = safetyRS("web-"+strconv.Itoa(i), uid, rapid.Int32Range(0, 4).Draw(t, "replicas"), o.selector, o.template,
			rapid.SampledFrom(garbledBuckets).Draw(t, "garbled"))
		sel, err := metav1.LabelSelectorAsSelector(o.rs.Spec.Selector)
		if err != nil {
			t.Fatalf("the selector of %v: %v", o, err)
		}
		o.sel = sel
		o.asked, o.maxAsked, o.generations = int(*o.rs.Spec.Replicas), int(*o.rs.Spec.Replicas), 1
		m.owners = append(m.owners, o)
		m.w.setOwner(o.rs)
		// Pods made before sharding, and by an earlier holder. The shard
		// counts those its selector matches that its pod cache or its
		// Unstamped (whose first list has them) holds.
		var seeds []*corev1.Pod
		for j := range rapid.IntRange(0, 2).Draw(t, "unstampedPods") {
			seeds = append(seeds, safetyPod(fmt.Sprintf("%s-old-%d", o.rs.Name, j), o.rs, nil))
		}
		for j := range rapid.IntRange(0, 1).Draw(t, "stampedPods") {
			seeds = append(seeds, safetyPod(fmt.Sprintf("%s-held-%d", o.rs.Name, j), o.rs, map[string]string{BucketLabel: BucketValue(uid)}))
		}
		for _, p := range seeds {
			m.w.seed(p)
			if o.matches(p.Labels) && (m.w.visible(p) || (m.u != nil && m.w.unstampedOf(p))) {
				o.seeded++
			} else {
				o.hidden++
			}
		}
	}
	// An orphan the first owner's selector may match.
	first := m.owners[0]
	orphan := map[string]string{"app": first.rs.Name}
	switch rapid.IntRange(0, 3).Draw(t, "orphan") {
	case 1: // no bucket label
		m.w.seed(safetyPod("orphan", nil, orphan))
	case 2: // a bucket of the shard
		orphan[BucketLabel] = bucketValue(rapid.IntRange(cc.shard.first(), cc.shard.end()-1).Draw(t, "orphanBucket"))
		m.w.seed(safetyPod("orphan", nil, orphan))
	case 3: // a bucket of another shard
		if cc.shard.Count > 1 {
			b := rapid.IntRange(0, Buckets-1-(cc.shard.end()-cc.shard.first())).Draw(t, "orphanBucket")
			if b >= cc.shard.first() {
				b += cc.shard.end() - cc.shard.first()
			}
			orphan[BucketLabel] = bucketValue(b)
			m.w.seed(safetyPod("orphan", nil, orphan))
		}
	}

	resume := ""
	switch cc.resume {
	case 1:
		resume = m.w.version()
	case 2:
		v, _ := strconv.Atoi(m.w.version())
		resume = strconv.Itoa(v + rapid.IntRange(1, 4).Draw(t, "resumeAhead"))
	}
	m.cur = m.newHolder(t, resume)
	t.Logf("configuration %v", cc)
	for _, o := range m.owners {
		t.Logf("owner %v", o)
	}
	return m
}

// safetyRS is ReplicaSet name with uid, replicas, labels app=name and the
// drawn bucket label and selector.
func safetyRS(name string, uid types.UID, replicas int32, sel safetySelector, tmpl safetyTemplate, garbled string) *appsv1.ReplicaSet {
	own := BucketValue(uid)
	tl := map[string]string{"app": name}
	switch tmpl {
	case tmplOwn:
		tl[BucketLabel] = own
	case tmplOther:
		tl[BucketLabel] = otherBucket(uid)
	case tmplGarbled:
		tl[BucketLabel] = garbled
	}
	ls := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	req := func(op metav1.LabelSelectorOperator, values ...string) {
		ls.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: BucketLabel, Operator: op, Values: values}}
	}
	switch sel {
	case selBucketNone:
		req(metav1.LabelSelectorOpDoesNotExist)
	case selBucketNotIn:
		req(metav1.LabelSelectorOpNotIn, own)
	case selBucketIn:
		req(metav1.LabelSelectorOpIn, own)
	case selBucketOther:
		req(metav1.LabelSelectorOpIn, otherBucket(uid))
	}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: worldNS, Name: name, UID: uid, Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: ls,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

// safetyPod is a pod controlled by rs (nil: an orphan) with rs's app label
// and extra labels.
func safetyPod(name string, rs *appsv1.ReplicaSet, extra map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if rs != nil {
		p.Labels["app"] = rs.Name
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	}
	maps.Copy(p.Labels, extra)
	return p
}

// fatalfer is what newHolder needs of a *testing.T or a *rapid.T.
type fatalfer interface {
	Fatalf(format string, args ...any)
}

// newHolder takes the shard: a Held resuming from resume, its fence open
// from now, and a Controller over WrapCluster with it.
func (m *shardSafety) newHolder(t fatalfer, resume string) *safetyHolder {
	h := newHeld(m.cfg.shard, "lease-"+m.cfg.shard.String(), resume, m.clock, safetyWindow, m.clock.Now())
	wc := &worldClient{w: m.w, held: h}
	var client reconcile.PodClient = wc
	if m.cfg.getter {
		client = worldGetter{wc}
	}
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = worldOwners{m.w}
	cfg.Cluster.Pods = m.w
	if m.cfg.byController {
		cfg.Cluster.Pods = worldPodsBy{m.w}
	}
	cfg.Cluster.PodClient = client
	cfg.Cluster.StatusWriter = worldStatus{m.w}
	cfg.Cluster.CachesSynced = func() bool { return true }
	if m.cfg.versions {
		cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: m.w.version, Owners: m.w.version}
	}
	cfg.Cluster = WrapCluster(h, cfg.Cluster, m.u)
	cfg.Fence = h.Fence
	cfg.Clock = m.clock
	cfg.BurstReplicas = m.cfg.burst
	cfg.Expectations.Exact = m.cfg.exact
	cfg.Expectations.TTL = m.cfg.ttl
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		t.Fatalf("NewController(%v): %v", m.cfg, err)
	}
	return &safetyHolder{h: h, ctrl: ctrl, client: client}
}

func (m *shardSafety) step(t *rapid.T, action string) {
	w := m.w
	switch action {
	case "sync":
		m.sync(t, m.cur, rapid.IntRange(0, len(m.owners)-1).Draw(t, "synced"))
	case "syncRetired":
		if len(m.retired) > 0 {
			old := m.retired[rapid.IntRange(0, len(m.retired)-1).Draw(t, "retired")]
			m.sync(t, old, rapid.IntRange(0, len(m.owners)-1).Draw(t, "synced"))
		}
	case "deliver":
		w.deliver(m.cur.ctrl)
	case "deliverOne":
		w.deliverOne(m.cur.ctrl)
	case "drop":
		w.dropOne()
	case "duplicate":
		w.duplicateOne()
	case "deliverUnstamped":
		w.deliverUnstamped()
	case "stamp":
		// As the shard's RunFunc does, with a plain pod client of the
		// shard (the examples' PodControl): Stamp asks the fence before
		// each patch, and its errors are the fence's refusals.
		_, _ = m.u.Stamp(m.ctx, m.cur.h, m.cur.client)
	case "clock":
		m.clock.Step(rapid.SampledFrom([]time.Duration{time.Second, 6 * time.Second, 11 * time.Second, 6 * time.Minute}).Draw(t, "clockStep"))
	case "renew":
		m.cur.h.renew(m.clock.Now())
	case "lose":
		// The Coordinator saw the Lease taken: the fence closes for good and
		// the syncs go on, refused, until a handover.
		m.cur.h.close("lost")
	case "handover":
		// The holder gives the shard back (its fence closes for good, its
		// writes are recorded in the Lease) and the next one takes it with
		// caches listed afresh; the old Controller may still sync.
		m.cur.h.close("given back")
		m.retired = append(m.retired, m.cur)
		m.cur = m.newHolder(t, m.cur.h.written())
		w.relist()
	case "scale":
		o := m.owners[rapid.IntRange(0, len(m.owners)-1).Draw(t, "scaled")]
		replicas := rapid.Int32Range(0, 4).Draw(t, "replicas")
		if d := int(replicas - *o.rs.Spec.Replicas); d > 0 {
			o.asked += d
		}
		o.maxAsked = max(o.maxAsked, int(replicas))
		o.generations++
		rs := o.rs.DeepCopy()
		if cur, err := (worldOwners{w}).Get(worldNS, rs.Name); err == nil {
			rs.Status = cur.Status // the status is the controller's
		}
		rs.Spec.Replicas = &replicas
		rs.Generation++
		w.setOwner(rs)
		o.rs = rs
	default:
		m.act(t, action)
	}
}

// act is an outside actor's change of a pod: action is delete, relabel,
// strip, garble or rebucket.
func (m *shardSafety) act(t *rapid.T, action string) {
	w := m.w
	names := w.podNames()
	if len(names) == 0 {
		return
	}
	name := names[rapid.IntRange(0, len(names)-1).Draw(t, "pod")]
	p := w.pod(name)
	o := m.controller(p)
	switch action {
	case "delete":
		w.remove(name)
	case "relabel":
		w.relabel(name, func(l map[string]string) { l["app"] = "debug" })
	case "strip":
		w.relabel(name, func(l map[string]string) { delete(l, BucketLabel) })
	case "garble":
		value := rapid.SampledFrom(garbledBuckets).Draw(t, "garbledTo")
		w.relabel(name, func(l map[string]string) { l[BucketLabel] = value })
	case "rebucket":
		value := bucketValue(rapid.IntRange(0, Buckets-1).Draw(t, "rebucketTo"))
		w.relabel(name, func(l map[string]string) { l[BucketLabel] = value })
	}
	// The pod leaves what the shard's Controller counts as its owner's
	// when it is gone, its owner's selector no longer matches it, or
	// neither the shard's pod cache nor an Unstamped in step with the API
	// holds it.
	after := w.pod(name)
	departs := after == nil || (o != nil && !o.matches(after.Labels)) ||
		!(w.visible(after) || (m.cfg.unstamped == 1 && w.unstampedOf(after)))
	if o != nil && departs {
		o.departures++
	}
}

// controller returns the model's owner that controls p, nil if none.
func (m *shardSafety) controller(p *corev1.Pod) *safetyOwner {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return nil
	}
	for _, o := range m.owners {
		if o.rs.UID == ref.UID {
			return o
		}
	}
	return nil
}

// sync syncs owner i with holder's Controller and checks (e).
func (m *shardSafety) sync(t *rapid.T, holder *safetyHolder, i int) {
	o := m.owners[i]
	res, err := holder.ctrl.Sync(m.ctx, o.key())
	if !o.inShard && (res.Managed || (err != nil && !errors.Is(err, reconcile.ErrDeferred))) {
		t.Fatalf("(e) sync of %v, of another shard: managed %v, error %v", o, res.Managed, err)
	}
	if len(res.Outcome.NotSelected) > 0 && !errors.Is(err, reconcile.ErrTerminal) && !errors.Is(err, reconcile.ErrFenced) {
		t.Fatalf("(e) sync of %v deleted %d created pods its selector does not match and is not terminal: %v", o, len(res.Outcome.NotSelected), err)
	}
}

func (m *shardSafety) check(t *rapid.T) {
	if v := m.w.violation(); v != "" {
		t.Fatalf("(d) %s", v)
	}
	for _, o := range m.owners {
		created, adopted := m.w.createdBy(o.rs.UID)
		live := m.w.controlled(o.rs.UID)
		switch {
		case !o.inShard && created > 0:
			t.Fatalf("(c) %d pods created for %v, of another shard", created, o)
		case !o.creates() && created > 0:
			t.Fatalf("(c) %d pods created for %v, whose pods cannot be created", created, o)
		}
		if allowance := o.asked + o.departures; created > allowance {
			t.Fatalf("(a) %d pods created for %v, allowance %d (asked %d, departures %d)", created, o, allowance, o.asked, o.departures)
		}
		if bound := max(o.maxAsked, o.seeded) + o.hidden + adopted + o.departures; live > bound {
			t.Fatalf("(b) %d live pods controlled by %v, bound %d (most asked %d, adopted %d, departures %d)",
				live, o, bound, o.maxAsked, adopted, o.departures)
		}
	}
}
