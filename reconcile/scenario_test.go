package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

// The scenario figures of issue 7: scripted runs of a controller loop on the
// simulated cluster (reconcile/internal/cluster) with virtual time, comparing
// upstream's expectations with tracked creations and the evidence-first
// policy, and issue 15's lag scenario (e), comparing the consistency gate
// on and off. `go test -run Scenario -v ./reconcile/` (make
// scenarios) prints the tables; each test asserts the figures the issue
// targets. Scenarios (a)-(d) measure the expectations alone: the gate is
// off there (scenSetup.Gate).
//
// The loop (a Controller fed by the informer's events): the clock advances in 1-second ticks; every event the informer
// delivers that yields a request is followed at once by a sync (a worker
// that is never busy); every 30 s a periodic resync syncs as well, after a
// watch bookmark when nothing is queued (unless NoResync); a sync the gate
// deferred is retried after the workqueue's backoff, at the first tick
// that reaches it. Slow-start batches are capped at 1
// so that the order of API calls, and therefore every figure, is
// deterministic.

const scenResync = 30 * time.Second

// scenSetup describes one run.
type scenSetup struct {
	Replicas int
	Policy   expectations.ExpiryPolicy
	// Track turns on Config.TrackCreations.
	Track bool
	// Lag is how far the informer runs behind the API, until LagUntil
	// (if > 0), after which it keeps up.
	Lag, LagUntil time.Duration
	// DuplicateAdds delivers every Added event twice, each time as an add
	// (at-least-once notification).
	DuplicateAdds bool
	// LoseFirstPodEvents drops every event of the first pod the controller
	// creates; with DeleteLostPod that pod is also deleted right after the
	// first sync, so the cache is consistent (a create-then-delete a
	// relist hides), otherwise the cache lacks a pod the API has.
	LoseFirstPodEvents, DeleteLostPod bool
	// CreateFault decides per create call (0-based) what the API does.
	CreateFault func(call int) cluster.Fault
	// ScaleTo, when ScaleAt > 0, changes the desired replicas at ScaleAt.
	ScaleTo int
	ScaleAt time.Duration
	// RelistAt, when > 0, relists the informer then (a watch restart).
	RelistAt time.Duration
	// Gate turns the consistency gate on: Config.CacheVersions.Pods
	// is the informer's version either way (EvidenceFirst needs it), and
	// without Gate Config.DisableConsistencyGate is set, so that the
	// scenarios of issue 7 measure the expectations alone.
	Gate bool
	// NoResync turns the 30-second periodic resync off: only events, owner
	// updates and retries sync, as with upstream's 12-hour resync.
	NoResync bool
	// TouchAt, when > 0, updates the owner then (an owner update event
	// enqueues it), without changing what it wants.
	TouchAt time.Duration
	Horizon time.Duration
}

// scenFigures is what one run measured.
type scenFigures struct {
	Syncs          int
	Created        int           // pods the API created for the controller
	Deleted        int           // pods the API deleted for the controller
	MaxLive        int           // most active controller pods in the API at once
	Extra          int           // most active pods above the desired replicas at once
	WrongSatisfied int           // rounds found fulfilled while one of their pods was still unobserved
	Progress       time.Duration // from the first sync to the next managed sync (-1: none)
	Final          int           // active controller pods in the API at the end
	Short          int           // most pods missing after the controller first reached Replicas
	Deferrals      int           // syncs the consistency gate deferred (Gate.Deferred)
	Resolutions    map[expectations.Resolution]int
}

type scenRun struct {
	t       *testing.T
	setup   scenSetup
	ctx     context.Context
	c       *cluster.Cluster
	rs      *appsv1.ReplicaSet
	key     string
	tracker *expectations.Tracker
	ctrl    *reconcile.Controller[*appsv1.ReplicaSet]
	start   time.Time

	dirty      bool
	createdRV  map[string]int64 // pod key -> resourceVersion of its creation
	seen       map[string]bool  // pod keys the cache has held
	roundStart int64            // API resourceVersion before the current creation round
	duplicated map[string]bool  // RVs of events already duplicated
	lost       string           // key of the pod whose events are dropped
	reached    bool             // the live pods have reached Replicas
	wrong      map[int64]bool   // rounds (by roundStart) counted in WrongSatisfied
	failures   int              // deferrals in a row: the workqueue's backoff exponent
	retryAt    time.Time        // when the rate-limited retry of a deferred sync is due
	deferred   int              // syncs that returned the gate's error

	mu  sync.Mutex
	seq int

	fig scenFigures
}

func newScenRun(t *testing.T, setup scenSetup) *scenRun {
	t.Helper()
	c := cluster.New(cluster.Options{Seed: 1})
	rs := cluster.NewReplicaSet("default", "web", int32(setup.Replicas), map[string]string{"app": "web"})
	r := &scenRun{
		t: t, setup: setup, ctx: context.Background(), c: c, rs: rs, key: "default/web", start: c.Clock.Now(),
		createdRV: map[string]int64{}, seen: map[string]bool{}, duplicated: map[string]bool{}, wrong: map[int64]bool{},
		fig: scenFigures{Progress: -1, Resolutions: map[expectations.Resolution]int{}},
	}
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = oneOwner{rs}
	cfg.Cluster.CachesSynced = alwaysSynced
	cfg.Cluster.Pods = informerPods(c)
	cfg.Cluster.PodClient = podClient{c.Client, &recPatcher{api: c.API}}
	noStatus(&cfg)
	cfg.Clock = c.Clock
	cfg.SetTrackCreations(setup.Track)
	cfg.SlowStart = slowstart.Options{MaxBatchSize: 1}
	cfg.SetNameGenerator(r.name)
	// EvidenceFirst comes with Exact, which tracks creations too.
	cfg.Expectations.Exact = setup.Policy == expectations.EvidenceFirst
	cfg.Hooks.Deferred = func(string, *expectations.StaleCacheError) { r.fig.Deferrals++ }
	cfg.Cluster.CacheVersions.Pods = c.Informer.LastSyncResourceVersion
	cfg.DisableConsistencyGate = !setup.Gate
	ctrl, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	r.ctrl, r.tracker = ctrl, ctrl.Tracker()
	note := func(reqs []reconcile.SyncRequest) {
		if len(reqs) > 0 {
			r.dirty = true
		}
	}
	c.Informer.Raw = setup.DuplicateAdds
	c.Informer.Handler = cluster.Handler{
		OnAdd:    func(p *corev1.Pod) { r.seen[cluster.Key(p)] = true; note(ctrl.PodAdded(p)) },
		OnUpdate: func(o, p *corev1.Pod) { r.seen[cluster.Key(p)] = true; note(ctrl.PodUpdated(o, p)) },
		OnDelete: func(p *corev1.Pod) { note(ctrl.PodDeleted(p)) },
	}
	c.API.Watch(func(e cluster.Event) {
		if e.Type == cluster.Added {
			rv, _ := strconv.ParseInt(e.RV, 10, 64)
			r.createdRV[e.Key()] = rv
		}
	})
	if setup.LoseFirstPodEvents {
		c.Informer.DropIf = func(e cluster.Event) bool {
			if r.lost == "" && e.Type == cluster.Added {
				r.lost = e.Key()
			}
			return e.Key() == r.lost
		}
	}
	if setup.CreateFault != nil {
		c.Client.Faults.Create = func(call int, _ *corev1.Pod) cluster.Fault { return setup.CreateFault(call) }
	}
	return r
}

// name is the Controller's NameGenerator: "web-1", "web-2", … (deterministic).
func (r *scenRun) name(prefix string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return prefix + strconv.Itoa(r.seq)
}

func (r *scenRun) live() int {
	n := 0
	r.c.API.Each(func(p *corev1.Pod) {
		if ref := cluster.ControllerOf(p); ref != nil && ref.UID == r.rs.UID && podrank.IsActive(p) {
			n++
		}
	})
	return n
}

// unobserved counts the pods created in the current round that the cache
// has never held.
func (r *scenRun) unobserved() int {
	n := 0
	for key, rv := range r.createdRV {
		if rv > r.roundStart && !r.seen[key] {
			n++
		}
	}
	return n
}

func (r *scenRun) sync() {
	snap, _ := r.tracker.Snapshot(r.key)
	if snap.Resolution != expectations.NoRecord {
		r.fig.Resolutions[snap.Resolution]++
	}
	if snap.Satisfied && snap.Resolution == expectations.Fulfilled && r.unobserved() > 0 && !r.wrong[r.roundStart] {
		r.wrong[r.roundStart] = true
		r.fig.WrongSatisfied++
	}
	before, _ := strconv.ParseInt(r.c.API.ResourceVersion(), 10, 64)
	// Manage errors (injected faults) are expected here (res.ManageErr),
	// and the gate's deferrals, which the workqueue retries with its
	// default controller backoff (5ms doubling, up to 1000s) as upstream;
	// any other error would mean the sync did not run to the end.
	res, err := r.ctrl.Sync(r.ctx, r.key)
	r.fig.Syncs++
	r.dirty = false
	var stale *expectations.StaleCacheError
	if errors.As(err, &stale) {
		r.deferred++
		r.retryAt = r.c.Clock.Now().Add(min(5*time.Millisecond<<min(r.failures, 30), 1000*time.Second))
		r.failures++
		return
	}
	r.failures, r.retryAt = 0, time.Time{}
	if err != nil && res.ManageErr == nil {
		r.t.Fatalf("sync did not run to the end: %v", err)
	}
	if res.Managed && res.Diff != 0 {
		// A new round: creations before it are no longer its business.
		r.roundStart = before
	}
	if res.Managed && r.fig.Syncs > 1 && r.fig.Progress < 0 {
		r.fig.Progress = r.c.Clock.Now().Sub(r.start)
	}
}

func (r *scenRun) run() scenFigures {
	r.sync()
	if r.setup.DeleteLostPod && r.lost != "" {
		ns, name, _ := strings.Cut(r.lost, "/")
		_ = r.c.API.Delete(ns, name)
	}
	next := r.start.Add(scenResync)
	end := r.start.Add(r.setup.Horizon)
	for r.c.Clock.Now().Before(end) {
		r.c.Clock.Step(time.Second)
		elapsed := r.c.Clock.Now().Sub(r.start)
		if r.setup.ScaleAt > 0 && elapsed == r.setup.ScaleAt {
			n := int32(r.setup.ScaleTo)
			r.rs.Spec.Replicas = &n
			r.sync() // the owner's update event enqueues it
		}
		if r.setup.TouchAt > 0 && elapsed == r.setup.TouchAt {
			r.rs.Annotations = map[string]string{"touched": elapsed.String()}
			r.sync() // the owner's update event enqueues it
		}
		if !r.retryAt.IsZero() && !r.c.Clock.Now().Before(r.retryAt) {
			r.sync() // the rate-limited retry of a deferred sync
		}
		if r.setup.RelistAt > 0 && elapsed == r.setup.RelistAt {
			r.c.Informer.Relist()
			if r.dirty {
				r.sync()
			}
		}
		if r.setup.DuplicateAdds {
			shift := 0 // each copy queued shifts the later indices by one
			for i, e := range r.c.Informer.Pending() {
				if e.Type == cluster.Added && !r.duplicated[e.RV] {
					r.duplicated[e.RV] = true
					r.c.Informer.Duplicate(i + shift)
					shift++
				}
			}
		}
		lag := r.setup.Lag
		if r.setup.LagUntil > 0 && elapsed >= r.setup.LagUntil {
			lag = 0
		}
		for r.c.Informer.DeliverOne(lag) {
			if r.dirty {
				r.sync()
			}
			r.observe()
		}
		if !r.setup.NoResync && !r.c.Clock.Now().Before(next) {
			r.c.Informer.Bookmark()
			r.sync()
			next = next.Add(scenResync)
		}
		r.observe()
	}
	if r.deferred != r.fig.Deferrals {
		r.t.Fatalf("%d syncs deferred, Gate.Deferred called %d times", r.deferred, r.fig.Deferrals)
	}
	r.fig.Created = r.c.Client.Stats().Created
	r.fig.Deleted = r.c.Client.Stats().Deleted
	r.fig.Final = r.live()
	return r.fig
}

// observe updates the figures that follow the live pod count.
func (r *scenRun) observe() {
	live, desired := r.live(), int(*r.rs.Spec.Replicas)
	r.fig.MaxLive = max(r.fig.MaxLive, live)
	r.fig.Extra = max(r.fig.Extra, live-desired)
	if live >= desired {
		r.reached = true
	}
	if r.reached {
		r.fig.Short = max(r.fig.Short, desired-live)
	}
}

func scenTable(t *testing.T, title string, header string, rows [][]any) {
	t.Helper()
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, header)
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = fmt.Sprint(c)
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	require.NoError(t, w.Flush())
	t.Logf("%s\n%s", title, b.String())
}

func scenDur(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.String()
}

// TestScenarioLostAddEvent is issue 7 scenario (a): the add event of one
// of the controller's pods is lost. Desired 3; the informer has no lag.
func TestScenarioLostAddEvent(t *testing.T) {
	type row struct {
		name    string
		deleted bool
		policy  expectations.ExpiryPolicy
	}
	rows := []row{
		{"create-then-delete hidden from the watch", true, expectations.ExpireAfterTTL},
		{"create-then-delete hidden from the watch", true, expectations.EvidenceFirst},
		{"pod kept, its add event lost (cache lacks it)", false, expectations.ExpireAfterTTL},
		{"pod kept, its add event lost (cache lacks it)", false, expectations.EvidenceFirst},
	}
	var table [][]any
	figs := map[row]scenFigures{}
	for _, rw := range rows {
		f := newScenRun(t, scenSetup{
			Replicas: 3, Policy: rw.policy, LoseFirstPodEvents: true, DeleteLostPod: rw.deleted,
			RelistAt: 9 * time.Minute, Horizon: 10 * time.Minute,
		}).run()
		figs[rw] = f
		table = append(table, []any{rw.name, rw.policy, scenDur(f.Progress), f.Extra, f.Final, f.Syncs})
	}
	scenTable(t, "(a) an add event is lost: time until the controller acts again (desired 3, resync 30s)",
		"case\tpolicy\ttime to progress\textra pods\tfinal pods\tsyncs", table)

	up, ev := figs[rows[0]], figs[rows[1]]
	assert.Greater(t, up.Progress, expectations.DefaultTTL, "upstream stalls for the TTL (R-2.6)")
	assert.GreaterOrEqual(t, ev.Progress, time.Duration(0), "evidence-first makes progress")
	assert.LessOrEqual(t, ev.Progress, scenResync, "evidence-first: within one resync period")
	assert.Zero(t, ev.Extra, "the replacement is not an extra pod")
	assert.Equal(t, 3, ev.Final)
	kept := figs[rows[3]]
	assert.LessOrEqual(t, kept.Progress, scenResync)
	assert.Equal(t, 1, kept.Extra, "a cache that lacks a live pod over-creates under any policy (the documented failure mode)")
}

// TestScenarioLaggingInformer is issue 7 scenario (b): the informer runs 6
// minutes behind the API, longer than the 5-minute TTL, for an hour: a
// scale-up from 0 to 3, and a scale-down from 6 to 3 ten minutes in.
func TestScenarioLaggingInformer(t *testing.T) {
	type row struct {
		name   string
		policy expectations.ExpiryPolicy
		setup  scenSetup
	}
	var rows []row
	for _, p := range []expectations.ExpiryPolicy{expectations.ExpireAfterTTL, expectations.EvidenceFirst} {
		rows = append(rows,
			row{"scale 0 -> 3", p, scenSetup{Replicas: 3}},
			row{"scale 6 -> 3 at 10m", p, scenSetup{Replicas: 6, ScaleTo: 3, ScaleAt: 10 * time.Minute}})
	}
	var table [][]any
	var figs []scenFigures
	for _, rw := range rows {
		s := rw.setup
		s.Policy, s.Lag, s.Horizon = rw.policy, 6*time.Minute, time.Hour
		f := newScenRun(t, s).run()
		figs = append(figs, f)
		table = append(table, []any{rw.name, rw.policy, f.Created, f.Deleted, f.Extra, f.Short, f.Final,
			f.Resolutions[expectations.Expired], f.Resolutions[expectations.WaitingForCache]})
	}
	scenTable(t, "(b) the informer lags 6 minutes behind the API (1 hour)",
		"case\tpolicy\tpods created\tpods deleted\tmost extra pods\tmost missing pods\tfinal pods\tsyncs after expiry\tsyncs waiting for the cache", table)

	assert.Positive(t, figs[0].Extra, "upstream over-creates (Kubernetes #129795)")
	up := figs[2]
	assert.Zero(t, up.Extra, "evidence-first waits for the cache instead of creating again")
	assert.Zero(t, up.Short)
	assert.Equal(t, 3, up.Created)
	assert.Equal(t, 3, up.Final)
}

// TestScenarioDuplicateAndLateAdds is issue 7 scenario (c): add events that
// arrive twice, and add events of an earlier round that arrive during a later
// one, counted versus tracked by pod key.
func TestScenarioDuplicateAndLateAdds(t *testing.T) {
	type row struct {
		name  string
		setup scenSetup
	}
	var rows []row
	for _, track := range []bool{false, true} {
		rows = append(rows,
			row{"every add event delivered twice", scenSetup{
				Replicas: 4, Track: track, DuplicateAdds: true, Horizon: 10 * time.Minute}},
			row{"adds of round 1 arrive in round 2", scenSetup{
				Replicas: 3, Track: track, Lag: 6 * time.Minute, LagUntil: 12 * time.Minute, Horizon: 30 * time.Minute}},
		)
	}
	var table [][]any
	var figs []scenFigures
	for _, rw := range rows {
		f := newScenRun(t, rw.setup).run()
		figs = append(figs, f)
		mode := "counted"
		if rw.setup.Track {
			mode = "tracked"
		}
		table = append(table, []any{rw.name, mode, f.WrongSatisfied, f.Extra, f.Final})
	}
	scenTable(t, "(c) duplicate and out-of-round add events (policy ExpireAfterTTL)",
		"case\tcreations\twrong satisfactions\textra pods\tfinal pods", table)

	assert.Positive(t, figs[0].WrongSatisfied, "counting: a duplicate add satisfies the round early")
	assert.Positive(t, figs[1].WrongSatisfied, "counting: a late add satisfies the next round")
	assert.Zero(t, figs[2].WrongSatisfied, "tracked: a duplicate add counts once")
	assert.Zero(t, figs[3].WrongSatisfied, "tracked: an add of another round does not count")
	assert.Zero(t, figs[2].Extra)
	for i, f := range figs {
		assert.Equal(t, rows[i].setup.Replicas, f.Final, "%s converges", rows[i].name)
	}
}

// TestScenarioLostCreateResponses is issue 7 scenario (d): the API creates
// the pod but the controller sees a timeout, on every second create call
// among the first eight. Desired 5; the informer lags 5 seconds.
func TestScenarioLostCreateResponses(t *testing.T) {
	lose := func(call int) cluster.Fault {
		if call < 8 && call%2 == 1 {
			return cluster.LoseResponse
		}
		return cluster.NoFault
	}
	type row struct {
		name  string
		setup scenSetup
	}
	rows := []row{
		{"counted (upstream)", scenSetup{}},
		{"tracked creations", scenSetup{Track: true}},
		{"tracked creations, evidence-first", scenSetup{Track: true, Policy: expectations.EvidenceFirst}},
	}
	var table [][]any
	var figs []scenFigures
	for _, rw := range rows {
		s := rw.setup
		s.Replicas, s.Lag, s.CreateFault, s.Horizon = 5, 5*time.Second, lose, 10*time.Minute
		r := newScenRun(t, s)
		f := r.run()
		figs = append(figs, f)
		st := r.c.Client.Stats()
		table = append(table, []any{rw.name, st.CreateLost, st.AlreadyExists, f.Created, f.Extra, f.Final})
	}
	scenTable(t, "(d) lost create responses (desired 5, informer lag 5s)",
		"controller\tlost responses\tAlreadyExists\tpods created\textra pods\tfinal pods", table)

	assert.Positive(t, figs[0].Extra, "counting over-creates after a lost response")
	assert.Zero(t, figs[1].Extra, "retrying the same name meets AlreadyExists instead of creating a second pod")
	assert.Zero(t, figs[2].Extra)
	for i, f := range figs {
		assert.Equal(t, 5, f.Final, "%s converges", rows[i].name)
	}
}

// TestScenarioInformerLagPastExpiry is issue 15's measurement, in the
// simulation: a ReplicaSet of 100 is created while the pod informer lags
// 340 s behind the API, longer than the 5-minute expectations TTL; the
// owner is touched (an update event) at 310 s, after the expectations have
// expired and before the cache has seen a single pod. There is no periodic
// resync (upstream's is 12 hours). A deferred sync is retried with the
// workqueue's backoff. Rows: the consistency gate on (upstream v1.37's
// default, R-10.9), off (StaleControllerConsistencyReplicaSet=false, or
// upstream before 1.36: the over-creation of kubernetes#129795), and off
// with exact expectations (TrackCreations and EvidenceFirst).
func TestScenarioInformerLagPastExpiry(t *testing.T) {
	type row struct {
		name  string
		setup scenSetup
	}
	rows := []row{
		{"gate on (default, CacheVersions set)", scenSetup{Gate: true}},
		{"gate off (DisableConsistencyGate; upstream before 1.36)", scenSetup{}},
		{"gate off, TrackCreations + EvidenceFirst", scenSetup{Track: true, Policy: expectations.EvidenceFirst}},
	}
	var table [][]any
	var figs []scenFigures
	for _, rw := range rows {
		s := rw.setup
		s.Replicas, s.Lag, s.NoResync, s.TouchAt, s.Horizon = 100, 340*time.Second, true, 310*time.Second, 20*time.Minute
		f := newScenRun(t, s).run()
		figs = append(figs, f)
		table = append(table, []any{rw.name, f.Created, f.Extra, f.Deleted, f.Deferrals, f.Final, f.Syncs})
	}
	scenTable(t, "(e) pod informer 340s behind, owner touched at 310s, past the 5m expiry (desired 100, no resync, 20 minutes)",
		"controller\tpods created\textra pods\tpods deleted\tdeferrals\tfinal pods\tsyncs", table)

	on, off, exact := figs[0], figs[1], figs[2]
	assert.Zero(t, on.Extra, "R-10.9: the gate defers until the cache has the controller's creates")
	assert.Equal(t, 100, on.Created)
	assert.Positive(t, on.Deferrals)
	assert.Equal(t, 100, off.Extra, "without the gate the expired expectations let a stale cache recreate every pod (kubernetes#129795)")
	assert.Zero(t, off.Deferrals)
	assert.Zero(t, exact.Extra, "EvidenceFirst waits for the cache instead of expiring")
	assert.Zero(t, exact.Deferrals)
	for i, f := range figs {
		assert.Equal(t, 100, f.Final, "%s converges", rows[i].name)
	}
}
