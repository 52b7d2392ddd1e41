package reconcile_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Issue 40's property, "never runs away, whatever the configuration": a
// model-based test of a Controller over stampWorld in which each case
// draws the configuration as well as the world:
//   - the stamp the pod client declares and adds (none, or one label) and
//     the selector (plain, or one that excludes the stamp: DoesNotExist,
//     NotIn, In with another value);
//   - the pod cache's filter: every pod, owned-only on the stamp's label,
//     owned-only on a label the stamp does not set, owned-only dropping
//     finished pods;
//   - Exact on or off, cache versions supplied or not, the TTL and the
//     SafetyLimit, a status interval, lean pods, the burst, a fence
//     that may refuse writes;
//   - the environment: a mutating admission that rewrites the selected
//     label or strips the stamp on create, an actor that strips the stamp
//     from live pods, pods deleted, finished or relabelled behind the
//     controller's back, events delivered late, dropped or duplicated,
//     clock steps across the TTL, scale changes, another owner's pod and
//     an orphan no selector matches.
//
// After every step it checks:
//   - (a) the pods the controller created over the run never exceed the
//     replicas it was asked for (the first replicas and every increase)
//     plus the pods that left its control for reasons outside it (deleted,
//     finished or relabelled behind its back) plus, with an owned-only
//     cache, one per stamp the actor stripped (a sync between the cache's
//     update and the handler's deletion event may replace the pod once,
//     before it is stamped back) plus, per spec generation of a
//     misconfigured owner, what the breaker lets through: one round of at
//     most a burst;
//   - (b) a misconfigured owner (a selector that excludes the stamp, an
//     admission that rewrites the selected label, a cache that cannot see
//     the pods it creates) that wants pods after two syncs that created
//     pods is terminal, with a condition reason on the error;
//   - (c) another owner's pod and the unmatched orphan are never patched
//     nor deleted;
//   - (d) a well-configured owner is never terminal.
//
// The cache is always up to date (its version is the API's): what lags,
// drops and duplicates are the handlers' events, so the expectations see
// the environment's faults while the listing stays healthy.

const (
	// configSafetyCases is the least number of cases `go test` runs;
	// -configsafety.cases raises it (make soak runs 1,000,000).
	configSafetyCases = 50_000
	// configSafetyMaxSteps bounds the steps of a case.
	configSafetyMaxSteps = 24
)

var configSafetyCasesFlag = flag.Int("configsafety.cases", configSafetyCases, "TestModelNeverRunsAway: the least number of cases to run")

// configSelector is a selector the model draws relative to the stamp.
type configSelector int

const (
	selPlain        configSelector = iota // app=web
	selStampAbsent                        // app=web, stamp key DoesNotExist
	selStampNotIn                         // app=web, stamp key NotIn (its value)
	selStampInOther                       // app=web, stamp key In (another value)
)

var configSelectorNames = []string{"plain", "stamp DoesNotExist", "stamp NotIn", "stamp In other"}

func (s configSelector) build() *metav1.LabelSelector {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	switch s {
	case selStampAbsent:
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: stampKey, Operator: metav1.LabelSelectorOpDoesNotExist}}
	case selStampNotIn:
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: stampKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web"}}}
	case selStampInOther:
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: stampKey, Operator: metav1.LabelSelectorOpIn, Values: []string{"other"}}}
	}
	return sel
}

// configFilter is the pod cache's filter.
type configFilter int

const (
	filterAll            configFilter = iota // every pod (upstream)
	filterOwned                              // the stamp's label
	filterOwnedElsewhere                     // a label the stamp does not set
	filterOwnedRunning                       // the stamp's label, finished pods dropped
)

var configFilterNames = []string{"all", "owned", "owned on another label", "owned, finished dropped"}

// configAdmission is a mutating admission on pod creates.
type configAdmission int

const (
	admitNone configAdmission = iota
	admitRewrite
	admitStripStamp
)

var configAdmissionNames = []string{"none", "rewrites app", "strips the stamp"}

// configCase is one drawn configuration.
type configCase struct {
	stamp          bool
	selector       configSelector
	filter         configFilter
	admission      configAdmission
	exact          bool
	versions       bool // Cluster.CacheVersions.Pods is set (Exact needs it)
	ttl            time.Duration
	safetyLimit    time.Duration
	statusInterval time.Duration
	lean           bool
	fence          bool
	burst          int
}

func (c configCase) String() string {
	return fmt.Sprintf("{stamp %v, selector %s, filter %s, admission %s, exact %v, versions %v, ttl %v, safetyLimit %v, statusInterval %v, lean %v, fence %v, burst %d}",
		c.stamp, configSelectorNames[c.selector], configFilterNames[c.filter], configAdmissionNames[c.admission],
		c.exact, c.versions, c.ttl, c.safetyLimit, c.statusInterval, c.lean, c.fence, c.burst)
}

// misconfigured is the model's verdict: can the pods this configuration
// creates never become the owner's active pods? Such an owner must end
// terminal.
func (c configCase) misconfigured() bool {
	switch {
	case c.stamp && c.selector != selPlain:
		return true // the selector excludes the stamp
	case c.admission == admitRewrite:
		return true // created pods do not match
	case c.filter == filterOwnedElsewhere:
		return true // the cache cannot see them
	case c.filter != filterAll && !c.stamp:
		return true // created without the label the cache selects
	}
	return false
}

// repaired is a configuration the controller mends: an admission strips
// the stamp the owned-only cache selects, and the controller puts it back
// . Its breaker may open before the first repair shows in the
// cache; it need not.
func (c configCase) repaired() bool {
	return !c.misconfigured() && c.filter != filterAll && c.admission == admitStripStamp
}

func drawConfigCase(t *rapid.T) configCase {
	c := configCase{
		stamp:          rapid.Bool().Draw(t, "stamp"),
		filter:         configFilter(rapid.IntRange(0, 3).Draw(t, "filter")),
		admission:      configAdmission(rapid.SampledFrom([]int{0, 0, 0, 1, 2}).Draw(t, "admission")),
		exact:          rapid.Bool().Draw(t, "exact"),
		versions:       rapid.Bool().Draw(t, "versions"),
		ttl:            rapid.SampledFrom([]time.Duration{0, 30 * time.Second}).Draw(t, "ttl"),
		safetyLimit:    rapid.SampledFrom([]time.Duration{0, 0, time.Minute}).Draw(t, "safetyLimit"),
		statusInterval: rapid.SampledFrom([]time.Duration{0, 10 * time.Second}).Draw(t, "statusInterval"),
		lean:           rapid.Bool().Draw(t, "lean"),
		fence:          rapid.Bool().Draw(t, "fence"),
		burst:          rapid.IntRange(1, 4).Draw(t, "burst"),
	}
	if c.stamp {
		c.selector = configSelector(rapid.SampledFrom([]int{0, 0, 0, 1, 2, 3}).Draw(t, "selector"))
	}
	c.versions = c.versions || c.exact
	return c
}

// configModel is one case.
type configModel struct {
	ctx   context.Context
	cfg   configCase
	w     *stampWorld
	clock *fakeclock.Clock
	ctrl  *reconcile.Controller[*appsv1.ReplicaSet]
	owner *appsv1.ReplicaSet
	owns  *recOwners

	refuse atomic.Bool // the fence refuses while set

	asked       int // the first replicas and every increase
	departures  int // pods that left control for reasons outside the controller
	strips      int // stamps stripped from live pods by the actor
	generations int // specs set, the first included
	rounds      int // syncs that created pods since the last spec change
	terminal    bool
	untouched   map[string]types.UID // other owners' pods and the unmatched orphan
}

var configActions = []string{"sync", "sync", "sync", "sync", "deliver", "deliver", "deliverOne", "drop", "duplicate",
	"clock", "scale", "deleteBehindBack", "finish", "relabel", "strip", "fence"}

// TestModelNeverRunsAway runs issue 40's property in at least
// -configsafety.cases cases (configSafetyCases by default).
func TestModelNeverRunsAway(t *testing.T) {
	simCheck(t, max(*configSafetyCasesFlag, 1), func(t *rapid.T) {
		m := newConfigModel(t)
		for range rapid.IntRange(1, configSafetyMaxSteps).Draw(t, "steps") {
			m.step(t, rapid.SampledFrom(configActions).Draw(t, "action"))
			m.check(t)
		}
	})
}

func newConfigModel(t *rapid.T) *configModel {
	cc := drawConfigCase(t)
	m := &configModel{ctx: context.Background(), cfg: cc, clock: fakeclock.New(time.Unix(1e9, 0))}
	var stamp map[string]string
	if cc.stamp {
		stamp = stampLabels
	}
	m.w = newStampWorld(stamp)
	switch cc.filter {
	case filterOwned:
		m.w.filter = func(l map[string]string) bool { return l[stampKey] == "web" }
	case filterOwnedElsewhere:
		m.w.filter = func(l map[string]string) bool { return l["example.com/cache"] == "web" }
	case filterOwnedRunning:
		m.w.filter = func(l map[string]string) bool { return l[stampKey] == "web" }
		m.w.dropFinished = true
	}
	switch cc.admission {
	case admitRewrite:
		m.w.admit = func(p *corev1.Pod) { p.Labels["app"] = "rewritten" }
	case admitStripStamp:
		m.w.admit = func(p *corev1.Pod) { delete(p.Labels, stampKey) }
	}
	m.w.lean = cc.lean

	replicas := rapid.Int32Range(0, 4).Draw(t, "replicas")
	m.owner = stampRS(replicas, cc.selector.build())
	m.owner.UID = "web-uid"
	m.asked = int(replicas)
	m.generations = 1
	m.owns = newRecOwners(m.owner)
	m.untouched = m.w.seedBystanders(m.owner)

	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = m.owns
	cfg.Cluster.CachesSynced = alwaysSynced
	cfg.Cluster.Pods = m.w
	cfg.Cluster.PodClient = m.w.client()
	if cc.versions {
		cfg.Cluster.CacheVersions.Pods = m.w.version
	}
	(&recStatus{}).use(&cfg)
	cfg.Clock = m.clock
	cfg.BurstReplicas = cc.burst
	cfg.Expectations.Exact = cc.exact
	cfg.Expectations.TTL = cc.ttl
	cfg.Expectations.SafetyLimit = cc.safetyLimit
	cfg.StatusInterval = cc.statusInterval
	if cc.fence {
		cfg.Fence = func() error {
			if m.refuse.Load() {
				return errors.New("lease lost")
			}
			return nil
		}
	}
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		t.Fatalf("NewController(%v): %v", cc, err)
	}
	m.ctrl = ctrl
	t.Logf("configuration %v, replicas %d, misconfigured %v", cc, replicas, cc.misconfigured())
	return m
}

func (m *configModel) step(t *rapid.T, action string) {
	w := m.w
	switch action {
	case "sync":
		res, err := m.ctrl.Sync(m.ctx, "default/web")
		m.terminal = errors.Is(err, reconcile.ErrTerminal)
		if m.terminal {
			var reasoned interface{ ConditionReason() string }
			if !errors.As(err, &reasoned) || reasoned.ConditionReason() == "" {
				t.Fatalf("terminal error without a condition reason: %v", err)
			}
			if !m.cfg.misconfigured() && !m.cfg.repaired() {
				t.Fatalf("(d) a well-configured owner is terminal: %v", err)
			}
		}
		if m.cfg.misconfigured() && m.rounds >= 2 && res.Managed && res.Diff < 0 && !m.terminal && !errors.Is(err, reconcile.ErrFenced) {
			t.Fatalf("(b) misconfigured owner wants pods and is not terminal after %d rounds of creates: %v", m.rounds, err)
		}
		if len(res.Outcome.Created)+len(res.Outcome.NotSelected) > 0 {
			m.rounds++
		}
	case "deliver":
		w.deliver(m.ctrl)
	case "deliverOne":
		w.deliverOne(m.ctrl)
	case "drop":
		w.dropOne()
	case "duplicate":
		w.duplicateOne()
	case "clock":
		m.clock.Step(rapid.SampledFrom([]time.Duration{time.Second, 40 * time.Second, 6 * time.Minute}).Draw(t, "clockStep"))
	case "scale":
		replicas := rapid.Int32Range(0, 4).Draw(t, "scale")
		next := m.owner.DeepCopy()
		if replicas > *next.Spec.Replicas {
			m.asked += int(replicas - *next.Spec.Replicas)
		}
		next.Spec.Replicas = &replicas
		next.Generation++
		m.owner = next
		m.owns.set(next)
		m.generations++
		m.rounds = 0
	case "deleteBehindBack":
		if w.deleteOwned(rapid.IntRange(0, 7).Draw(t, "victim"), m.owner.UID) {
			m.depart()
		}
	case "finish":
		if w.finishOwned(rapid.IntRange(0, 7).Draw(t, "finished"), m.owner.UID) {
			m.depart()
		}
	case "relabel":
		if w.relabelOwned(rapid.IntRange(0, 7).Draw(t, "relabelled"), m.owner.UID, func(l map[string]string) { l["app"] = "debug" }) {
			m.depart()
		}
	case "strip":
		// Not a departure: the controller must put the stamp back. A sync
		// between the cache's update and the handler's deletion event may
		// replace it first, once; the pod is then stamped back and one of
		// the two deleted.
		w.relabelOwned(rapid.IntRange(0, 7).Draw(t, "stripped"), m.owner.UID, func(l map[string]string) { delete(l, stampKey) })
		m.strips++
		m.rounds = 0 // the actor, not the configuration, hides the pod for now
	case "fence":
		if m.cfg.fence {
			m.refuse.Store(!m.refuse.Load())
		}
	}
}

// depart counts a pod that left the controller's control for a reason
// outside it. It also restarts the count of (b): a pod gone before the
// controller could see it is no evidence against the configuration.
func (m *configModel) depart() {
	m.departures++
	m.rounds = 0
}

func (m *configModel) check(t *rapid.T) {
	_, created := m.w.counts()
	allowance := m.asked + m.departures
	if m.cfg.filter != filterAll {
		allowance += m.strips
	}
	if m.cfg.misconfigured() || m.cfg.repaired() {
		allowance += m.generations * m.cfg.burst
	}
	if created > allowance {
		t.Fatalf("(a) %d pods created, allowance %d (asked %d, departures %d, strips %d, generations %d)", created, allowance, m.asked, m.departures, m.strips, m.generations)
	}
	if v := m.w.touched(m.untouched); v != "" {
		t.Fatalf("(c) %s", v)
	}
}

// seedBystanders adds another owner's pod and an orphan no selector
// matches, both visible to every cache filter; it returns their names.
func (w *stampWorld) seedBystanders(owner *appsv1.ReplicaSet) map[string]types.UID {
	w.mu.Lock()
	defer w.mu.Unlock()
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "other-1", Namespace: owner.Namespace, UID: "uid-other-1", ResourceVersion: w.nextRV(),
		Labels:          map[string]string{"app": "web", stampKey: "web", "example.com/cache": "web"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&metav1.ObjectMeta{Name: "other", UID: "other-uid"}, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
	}}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "orphan-1", Namespace: owner.Namespace, UID: "uid-orphan-1", ResourceVersion: w.nextRV(),
		Labels: map[string]string{"app": "db", stampKey: "web", "example.com/cache": "web"},
	}}
	w.pods[other.Name] = other
	w.pods[orphan.Name] = orphan
	w.bystanders = map[string]string{other.Name: other.ResourceVersion, orphan.Name: orphan.ResourceVersion}
	return map[string]types.UID{other.Name: "other-uid", orphan.Name: ""}
}

// touched reports a bystander that was patched or deleted.
func (w *stampWorld) touched(untouched map[string]types.UID) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range untouched {
		p, ok := w.pods[name]
		switch {
		case !ok:
			return "bystander " + name + " was deleted"
		case p.ResourceVersion != w.bystanders[name]:
			return "bystander " + name + " was patched"
		}
	}
	return ""
}

// ownedNames returns the names of the live pods owner uid controls, in
// name order.
func (w *stampWorld) ownedLocked(uid types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == uid {
			out = append(out, p)
		}
	}
	sortPods(out)
	return out
}

// deleteOwned deletes the i-th (mod n) active pod of owner uid behind the
// controller's back, gracefully; it reports whether there was one.
func (w *stampWorld) deleteOwned(i int, uid types.UID) bool {
	w.mu.Lock()
	owned := activeOnly(w.ownedLocked(uid))
	if len(owned) == 0 {
		w.mu.Unlock()
		return false
	}
	name := owned[i%len(owned)].Name
	w.mu.Unlock()
	return w.client().DeletePod(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}) == nil
}

// finishOwned makes the i-th (mod n) active pod of owner uid Failed.
func (w *stampWorld) finishOwned(i int, uid types.UID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	owned := activeOnly(w.ownedLocked(uid))
	if len(owned) == 0 {
		return false
	}
	p := owned[i%len(owned)]
	old := p.DeepCopy()
	p.Status.Phase = corev1.PodFailed
	p.ResourceVersion = w.nextRV()
	w.changedLocked(old, p)
	return true
}

// relabelOwned edits the labels of the i-th (mod n) active pod of owner
// uid; it reports whether the owner's selector app=web stops matching.
func (w *stampWorld) relabelOwned(i int, uid types.UID, edit func(map[string]string)) bool {
	w.mu.Lock()
	owned := activeOnly(w.ownedLocked(uid))
	if len(owned) == 0 {
		w.mu.Unlock()
		return false
	}
	p := owned[i%len(owned)]
	was := p.Labels["app"] == "web"
	w.mu.Unlock()
	w.relabel(p.Name, edit)
	w.mu.Lock()
	defer w.mu.Unlock()
	return was && w.pods[p.Name].Labels["app"] != "web"
}

func activeOnly(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			out = append(out, p)
		}
	}
	return out
}

// deliverOne delivers the oldest queued event.
func (w *stampWorld) deliverOne(c *reconcile.Controller[*appsv1.ReplicaSet]) {
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
func (w *stampWorld) dropOne() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.events) > 0 {
		w.events = w.events[1:]
	}
}

// duplicateOne queues the oldest queued event again.
func (w *stampWorld) duplicateOne() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.events) > 0 {
		w.events = append(w.events, w.events[0])
	}
}
