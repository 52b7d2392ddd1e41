package sharding

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"
)

// A model-based test of the Coordinator: up to five replicas at a time
// share K shards (1 to 8) through an in-memory API server, one fake clock
// and caches that lag. Replicas join, tick, pause, die (they never tick
// again and their runners never return) and leave gracefully (stop); the
// runners of the shards they take write for their shard while their fence
// is open, and each write lands at the server up to LeaseDuration −
// RenewDeadline after it started (the margin the Options document); a
// runner returns only when the model says so, after its context is done
// and its writes have landed.
//
// A change of K (-shardmodel.changek): each case also draws a second
// count K2 (1 to 8; K2 = K is no change), and each replica that joins
// after the first ones runs with K or K2, so that replicas of two counts,
// whose shards overlap, run at once. The safety checks are therefore per
// bucket, the unit both counts share: shard i of K covers buckets
// [i·256/K, (i+1)·256/K). Without the flag every replica runs with K, and
// the checks are the per-shard ones they reduce to.
//
// The model checks:
//   - (1) per bucket, landed writes never go back to an older acquisition:
//     every acquisition of any shard gets the next number of one sequence,
//     and no write of a smaller number lands, for a bucket its shard
//     covers, after a write of a larger one, so two holders' writes never
//     interleave (within one K: per shard, as no earlier holder's write
//     lands after a later one's);
//   - (2) per bucket, at most one Held whose shard covers it has an open
//     fence at any instant, whatever the shards' counts (whether its
//     replica keeps the shard or is giving it back, and whatever became of
//     the replica);
//   - (3) Settle: once every replica that is alive ticks every RetryPeriod
//     with an up-to-date cache, within LeaseDuration + 2×RetryPeriod one
//     count K′ of those they run with has every one of its shards kept by
//     exactly one live replica of K′, with an open fence, none keeping more
//     than ceil(K′/N′) (N′ the live replicas of K′), and the live replicas
//     of the other count keep no shard (with one count alive: as without a
//     change of K);
//   - (4) a shard taken after its holder gave it back resumes from at
//     least the newest write that holder recorded (Held.Resume), per shard
//     Lease; and, across a change of K, from at least the newest write
//     recorded by the last holder of every shard of the other count whose
//     buckets overlap it and which was given back (ee1a3d8).
//
// What the model does not cover: failed or lost requests to the API server
// (every call answers at once), clocks that drift apart (one clock for
// every replica), more than two counts at once, a replica that changes its
// K without a new identity, and a replica identity used twice. A runner
// being given back writes until its fence closes, with writes in flight
// when the shard is given back: (1) failed on them until the Coordinator
// waited one margin after closing the fence of a runner that had not
// returned (TestModelLateWritesAfterGiveBack).

const (
	// shardModelCases is the least number of cases `go test` runs;
	// -shardmodel.cases raises it (1,000,000 for a soak).
	shardModelCases = 100_000
	// shardModelMaxSteps bounds the steps of a case.
	shardModelMaxSteps = 30

	modelLeaseDuration = 15 * time.Second
	modelRenewDeadline = 10 * time.Second
	// modelMaxLive bounds the replicas alive at a time, modelMaxReplicas
	// those of a case.
	modelMaxLive     = 5
	modelMaxReplicas = 8
)

var (
	shardModelCasesFlag = flag.Int("shardmodel.cases", shardModelCases, "TestModelShards: the least number of cases to run")
	shardModelTrace     = flag.Bool("shardmodel.trace", false, "TestModelShards: log every tick and the Leases after it (to read a failing case)")
	// shardModelChangeK is on by default since ee1a3d8, which made a late
	// renewal run the take's check against shards of another K; before it,
	// (2) failed about once in 10,000 cases
	// (TestModelChangeOfKRenewsAnExpiredShard pins that case).
	shardModelChangeK = flag.Bool("shardmodel.changek", true, "TestModelShards: draw a second K for the replicas that join (a change of K)")
)

// TestModelShards runs the model in at least -shardmodel.cases cases
// (shardModelCases by default), in rounds of -rapid.checks cases.
func TestModelShards(t *testing.T) {
	per := 100
	if f := flag.Lookup("rapid.checks"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
			per = v
		}
	}
	n := max(*shardModelCasesFlag, 1)
	if testing.Short() {
		// make check: a tenth of the cases (make test runs them all).
		n = max(n/10, 1)
	}
	for round := range (n + per - 1) / per {
		t.Run("round"+strconv.Itoa(round), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				m := newShardModel(t)
				actions := m.actions()
				names := slices.Sorted(maps.Keys(actions))
				weighted := make([]string, 0, 4*len(names))
				for _, name := range names {
					for range actionWeights[name] {
						weighted = append(weighted, name)
					}
				}
				for range rapid.IntRange(1, shardModelMaxSteps).Draw(t, "steps") {
					actions[rapid.SampledFrom(weighted).Draw(t, "action")](t)
					m.Check(t)
				}
			})
		})
	}
}

// actionWeights is how often each action is drawn, relative to the others.
var actionWeights = map[string]int{
	"Join": 1, "Round": 6, "Tick": 4, "Refresh": 3, "Step": 4, "Write": 4, "Finish": 2,
	"Pause": 1, "Die": 1, "Leave": 1, "Settle": 1,
}

func (m *shardModel) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"Join": m.Join, "Round": m.Round, "Tick": m.Tick, "Refresh": m.Refresh, "Step": m.Step, "Write": m.Write,
		"Finish": m.Finish, "Pause": m.Pause, "Die": m.Die, "Leave": m.Leave, "Settle": m.Settle,
	}
}

// memStore is the API server: the group's Leases, versioned by one
// counter that the writes of the shards' runners advance too. Every change
// appends the Leases after it to history, the stream a replica's cache
// follows. It answers at once and never fails but for Conflict, NotFound
// and AlreadyExists. The Leases it holds are never modified: it stores and
// returns copies.
type memStore struct {
	rv      int64
	leases  map[string]*coordinationv1.Lease
	history [][]*coordinationv1.Lease // sorted by name
	// changed is called on every update, with the Lease before and after.
	changed func(old, cur *coordinationv1.Lease)
}

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func (s *memStore) next() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

func (s *memStore) commit() {
	snap := make([]*coordinationv1.Lease, 0, len(s.leases))
	for _, name := range slices.Sorted(maps.Keys(s.leases)) {
		snap = append(snap, s.leases[name])
	}
	s.history = append(s.history, snap)
}

func (s *memStore) create(l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if _, ok := s.leases[l.Name]; ok {
		return nil, apierrors.NewAlreadyExists(leaseResource, l.Name)
	}
	l = l.DeepCopy()
	l.ResourceVersion = s.next()
	s.leases[l.Name] = l
	s.commit()
	return l.DeepCopy(), nil
}

func (s *memStore) update(l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	old, ok := s.leases[l.Name]
	if !ok {
		return nil, apierrors.NewNotFound(leaseResource, l.Name)
	}
	if l.ResourceVersion != old.ResourceVersion {
		return nil, apierrors.NewConflict(leaseResource, l.Name, fmt.Errorf("resourceVersion %s, stored %s", l.ResourceVersion, old.ResourceVersion))
	}
	l = l.DeepCopy()
	l.ResourceVersion = s.next()
	s.leases[l.Name] = l
	s.commit()
	if s.changed != nil {
		s.changed(old, l)
	}
	return l.DeepCopy(), nil
}

func (s *memStore) remove(name, rv string) error {
	old, ok := s.leases[name]
	if !ok {
		return apierrors.NewNotFound(leaseResource, name)
	}
	if rv != old.ResourceVersion {
		return apierrors.NewConflict(leaseResource, name, fmt.Errorf("resourceVersion %s, stored %s", rv, old.ResourceVersion))
	}
	delete(s.leases, name)
	s.next() // a delete advances the version as etcd does
	s.commit()
	return nil
}

// replicaStore is one replica's store: its cache is history[cacheAt].
// What cached and live return is shared with the store (the Coordinator
// copies what it changes, as it must with an informer's cache).
type replicaStore struct {
	s *memStore
	r *replica
}

var _ store = replicaStore{}

func (v replicaStore) cached() ([]*coordinationv1.Lease, error) {
	return v.s.history[v.r.cacheAt], nil
}

func (v replicaStore) live(context.Context) ([]*coordinationv1.Lease, error) {
	return v.s.history[len(v.s.history)-1], nil
}

func (v replicaStore) create(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return v.s.create(l)
}

func (v replicaStore) update(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return v.s.update(l)
}

func (v replicaStore) remove(_ context.Context, name, rv string) error {
	return v.s.remove(name, rv)
}

// timerClock is the shared fake clock as one replica sees it: it tells the
// model each time stop starts waiting on a timer, and until when.
type timerClock struct {
	*clocktesting.FakeClock
	waiting chan time.Time
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.waiting <- c.Now().Add(d)
	return t
}

type replica struct {
	id          string
	k           int // its Options.Shards
	c           *Coordinator
	clk         *timerClock
	cacheAt     int       // the index in history of this replica's cache
	pausedUntil time.Time // it does not tick before
	dead, left  bool
}

func (r *replica) alive() bool { return !r.dead && !r.left }

// runner is a RunFunc the Coordinator started for a shard it took: the
// model decides when it writes and when it returns.
type runner struct {
	r        *replica
	shard    Shard
	acq      int // the acquisitions of every shard before and including this one
	hd       *holding
	ctx      context.Context
	inFlight int
	recorded int64 // the newest version given to Wrote
	finished bool
}

// write is a write of a runner on its way to the server.
type write struct {
	ru      *runner
	started time.Time
	lands   time.Time
	seq     int
}

type landed struct {
	acq   int
	r     string
	shard Shard
	rv    int64
	at    time.Time
}

type shardModel struct {
	k      int // the count of the first replicas
	k2     int // the count a joining replica may draw instead: k2 = k is no change of K
	retry  time.Duration
	clock  *clocktesting.FakeClock
	store  *memStore
	names  map[string]Shard // shard Lease name → shard, of both counts
	shards []Shard          // the shards of both counts (of k once when k2 = k)

	replicas []*replica
	runners  []*runner
	byHold   map[*holding]*runner
	writes   []*write
	seq      int

	acquired int                // acquisitions so far, of every shard
	last     map[Shard]landed   // per shard: the last of its writes landed
	holder   map[string]*runner // per shard Lease: the runner of the last acquisition
	fromNone map[string]bool    // per shard Lease: its last change of holder took it from no holder
	// clearedBy is, per shard Lease, the replica whose write last took its
	// holder away (a give-back).
	clearedBy map[string]string
	failures  []string // violations found inside the Coordinator's calls
	ctx       context.Context
}

func newShardModel(t *rapid.T) *shardModel {
	k := rapid.IntRange(1, 8).Draw(t, "shards")
	retry := time.Duration(rapid.IntRange(1, 3).Draw(t, "retrySeconds")) * time.Second
	replicas := rapid.IntRange(1, 3).Draw(t, "initialReplicas")
	k2 := k
	if *shardModelChangeK {
		k2 = rapid.IntRange(1, 8).Draw(t, "newShards")
	}
	return newShardModelFixed(t, k, retry, replicas, k2)
}

// newShardModelFixed returns a model whose first replicas run with k
// shards, and whose joining replicas with k or k2.
func newShardModelFixed(t *rapid.T, k int, retry time.Duration, replicas, k2 int) *shardModel {
	m := &shardModel{
		k:         k,
		k2:        k2,
		retry:     retry,
		clock:     clocktesting.NewFakeClock(time.Unix(1e9, 0)),
		store:     &memStore{leases: map[string]*coordinationv1.Lease{}},
		names:     map[string]Shard{},
		byHold:    map[*holding]*runner{},
		last:      map[Shard]landed{},
		holder:    map[string]*runner{},
		fromNone:  map[string]bool{},
		clearedBy: map[string]string{},
		ctx:       klog.NewContext(context.Background(), logr.Discard()),
	}
	m.store.commit()
	m.store.changed = m.leaseChanged
	for _, count := range slices.Compact([]int{k, k2}) {
		for i := range count {
			s := Shard{Index: i, Count: count}
			m.names[shardLeaseName("g", s)] = s
			m.shards = append(m.shards, s)
		}
	}
	for range replicas {
		m.join(t, k)
	}
	return m
}

func (m *shardModel) now() time.Time { return m.clock.Now() }

func (m *shardModel) latest() int { return len(m.store.history) - 1 }

func (m *shardModel) live() []*replica {
	var out []*replica
	for _, r := range m.replicas {
		if r.alive() {
			out = append(out, r)
		}
	}
	return out
}

// join starts a replica with a new identity and k shards.
func (m *shardModel) join(t *rapid.T, k int) {
	id := "replica-" + strconv.Itoa(len(m.replicas))
	r := &replica{id: id, k: k, cacheAt: m.latest()}
	r.clk = &timerClock{FakeClock: m.clock, waiting: make(chan time.Time)}
	opts, err := Options{
		Namespace: "ns", Name: "g", Identity: id, Shards: k,
		LeaseDuration: modelLeaseDuration, RenewDeadline: modelRenewDeadline, RetryPeriod: m.retry,
		Clock: r.clk,
	}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r.c = newCoordinator(replicaStore{s: m.store, r: r}, opts)
	m.replicas = append(m.replicas, r)
}

// leaseChanged follows the shards' Leases, for (4): whether the last
// change of a Lease's holder took it from no holder, after a give-back.
// The take is the last change before the runner starts, so started looks
// at the take itself (whether the change before it cleared the holder is
// no longer known then).
func (m *shardModel) leaseChanged(old, cur *coordinationv1.Lease) {
	if _, ok := m.names[cur.Name]; !ok || holderOf(old) == holderOf(cur) {
		return
	}
	m.fromNone[cur.Name] = holderOf(old) == "" && holderOf(cur) != ""
	if holderOf(cur) == "" {
		m.clearedBy[cur.Name] = holderOf(old)
	}
}

// started is the Coordinator's start: a runner for hd.
func (m *shardModel) started(r *replica) func(context.Context, *holding) {
	return func(ctx context.Context, hd *holding) {
		s := hd.h.shard
		name := shardLeaseName("g", s)
		prev := m.holder[name]
		// (4) The Lease was given back by the previous runner's replica
		// (this take found it without a holder, and that replica cleared
		// it): the new holder resumes from at least what the previous one
		// recorded. A Lease another replica took by expiry and gave
		// straight back (a shard of another count held) records only what
		// the Lease had: the dead holder's writes up to its last renewal,
		// as a take by expiry does (docs/design/sharding.md).
		if m.fromNone[name] && prev != nil && m.clearedBy[name] == prev.r.id && parseRV(hd.h.Resume()) < prev.recorded {
			m.failures = append(m.failures, fmt.Sprintf("(4) shard %v: %s took it after %s gave it back, Resume %q < %d, the newest write %s recorded",
				s, r.id, prev.r.id, hd.h.Resume(), prev.recorded, prev.r.id))
		}
		// (4) across a change of K: every shard of the other count whose
		// buckets overlap s and whose last runner's replica gave it back
		// (it has no holder, and that replica cleared it: an expired
		// Lease keeps its holder's name, and one taken by expiry and given
		// straight back records only what its Lease had) has that runner's
		// writes in Resume too.
		for other, before := range m.holder {
			if other == name || before == nil || before.shard.Count == s.Count {
				continue
			}
			if first, end := shardsOverlap(before.shard, s); first >= end {
				continue
			}
			l := m.store.leases[other]
			if l != nil && holderOf(l) == "" && m.clearedBy[other] == before.r.id && parseRV(hd.h.Resume()) < before.recorded {
				m.failures = append(m.failures, fmt.Sprintf("(4) shard %v: %s took it after %s gave back shard %v, which overlaps it, Resume %q < %d, the newest write %s recorded",
					s, r.id, before.r.id, before.shard, hd.h.Resume(), before.recorded, before.r.id))
			}
		}
		m.acquired++
		ru := &runner{r: r, shard: s, acq: m.acquired, hd: hd, ctx: ctx}
		m.runners = append(m.runners, ru)
		m.byHold[hd] = ru
		m.holder[name] = ru
	}
}

func parseRV(rv string) int64 {
	n, _ := strconv.ParseInt(rv, 10, 64)
	return n
}

func (m *shardModel) tick(t *rapid.T, r *replica) {
	r.c.tick(m.ctx, m.started(r))
	if *shardModelTrace {
		t.Logf("%v: %s ticked (cache %d of %d): %s", m.rel(m.now()), r.id, r.cacheAt, m.latest(), m.describe())
	}
}

// describe returns the Leases and what each replica holds, for the trace.
func (m *shardModel) describe() string {
	var b strings.Builder
	for _, l := range m.store.history[m.latest()] {
		fmt.Fprintf(&b, "\n\t%s rv=%s holder=%q renew=%v written=%s", l.Name, l.ResourceVersion, holderOf(l),
			m.rel(l.Spec.RenewTime.Time), l.Annotations[WrittenAnnotation])
	}
	for _, r := range m.replicas {
		r.c.mu.Lock()
		fmt.Fprintf(&b, "\n\t%s K=%d dead=%v left=%v held:", r.id, r.k, r.dead, r.left)
		for _, i := range slices.Sorted(maps.Keys(r.c.held)) {
			hd := r.c.held[i]
			fmt.Fprintf(&b, " %d(rv=%s releasing=%v fence=%v)", i, hd.lease.ResourceVersion, !hd.releasing.IsZero(), hd.h.Fence() == nil)
		}
		r.c.mu.Unlock()
	}
	return b.String()
}

// advance moves the clock to target, landing the writes due on the way in
// the order they land (before, if before is set: a write due at target
// lands at the next advance).
func (m *shardModel) advance(t *rapid.T, target time.Time, before bool) {
	for {
		var first *write
		for _, w := range m.writes {
			if first == nil || w.lands.Before(first.lands) || (w.lands.Equal(first.lands) && w.seq < first.seq) {
				first = w
			}
		}
		if first == nil || first.lands.After(target) || (before && first.lands.Equal(target)) {
			break
		}
		if first.lands.After(m.now()) {
			m.clock.SetTime(first.lands)
		}
		m.land(t, first)
	}
	if target.After(m.now()) {
		m.clock.SetTime(target)
	}
}

// land makes w reach the server: it gets the next version, and its
// runner records it.
func (m *shardModel) land(t *rapid.T, w *write) {
	m.writes = slices.DeleteFunc(m.writes, func(x *write) bool { return x == w })
	rv := m.store.rv + 1
	m.store.rv = rv
	ru := w.ru
	ru.inFlight--
	// (1) per bucket. Every write covers all the buckets of its shard, and
	// the writes of one shard have landed in the order of their
	// acquisitions (or (1) failed before): the last write landed on a
	// bucket of ru's shard is the last write of one of the shards that
	// overlap it.
	for _, s := range m.shards {
		l, ok := m.last[s]
		first, end := shardsOverlap(s, ru.shard)
		if ok && first < end && l.acq > ru.acq {
			t.Fatalf("(1) buckets [%d, %d): a write of acquisition %d (%s, shard %v, started %v, version %d) landed at %v after a write of acquisition %d (%s, shard %v, version %d, at %v)",
				first, end, ru.acq, ru.r.id, ru.shard, m.rel(w.started), rv, m.rel(m.now()), l.acq, l.r, l.shard, l.rv, m.rel(l.at))
		}
	}
	m.last[ru.shard] = landed{acq: ru.acq, r: ru.r.id, shard: ru.shard, rv: rv, at: m.now()}
	ru.hd.h.Wrote(strconv.FormatInt(rv, 10))
	ru.recorded = max(ru.recorded, rv)
}

// rel is t as seconds since the model started, for messages.
func (m *shardModel) rel(t time.Time) time.Duration { return t.Sub(time.Unix(1e9, 0)) }

// finish makes ru return.
func (m *shardModel) finish(ru *runner) {
	ru.finished = true
	close(ru.hd.done)
}

// Join starts a replica with a new identity, running with K or, when the
// case changes K, with K2.
func (m *shardModel) Join(t *rapid.T) {
	if len(m.live()) >= modelMaxLive || len(m.replicas) >= modelMaxReplicas {
		return
	}
	k := m.k
	if m.k2 != m.k {
		k = rapid.SampledFrom([]int{m.k, m.k2}).Draw(t, "joinShards")
	}
	m.join(t, k)
}

// pickLive draws a replica alive, or returns nil when none is.
func (m *shardModel) pickLive(t *rapid.T) *replica {
	live := m.live()
	if len(live) == 0 {
		return nil
	}
	return rapid.SampledFrom(live).Draw(t, "replica")
}

// Tick runs a round of a replica that is alive and not paused.
func (m *shardModel) Tick(t *rapid.T) {
	r := m.pickLive(t)
	if r == nil || m.now().Before(r.pausedUntil) {
		return
	}
	m.tick(t, r)
}

// Round is a RetryPeriod of normal operation: every runner whose fence is
// open may start a write, every replica alive and not paused ticks, each
// with its cache brought up to date or left as it is, then the clock moves
// by RetryPeriod.
func (m *shardModel) Round(t *rapid.T) {
	for _, ru := range m.runners {
		if !ru.finished && ru.hd.h.Fence() == nil && rapid.Bool().Draw(t, "writes") {
			m.write(t, ru)
		}
	}
	for _, r := range m.live() {
		if m.now().Before(r.pausedUntil) {
			continue
		}
		if rapid.IntRange(0, 3).Draw(t, "stale") != 0 {
			r.cacheAt = m.latest()
		}
		m.tick(t, r)
	}
	m.advance(t, m.now().Add(m.retry), false)
}

// Refresh delivers some of the Lease events a replica's cache lags by,
// in order: up to the newest, or fewer.
func (m *shardModel) Refresh(t *rapid.T) {
	r := m.pickLive(t)
	if r == nil {
		return
	}
	if rapid.Bool().Draw(t, "toNewest") {
		r.cacheAt = m.latest()
		return
	}
	r.cacheAt = rapid.IntRange(r.cacheAt, m.latest()).Draw(t, "cacheAt")
}

// Step moves the clock, by a little or by more than a LeaseDuration.
func (m *shardModel) Step(t *rapid.T) {
	var d time.Duration
	switch rapid.IntRange(0, 2).Draw(t, "stepKind") {
	case 0:
		d = time.Duration(rapid.IntRange(1, 3000).Draw(t, "stepMillis")) * time.Millisecond
	case 1:
		d = m.retry
	default:
		d = time.Duration(rapid.IntRange(1, 20).Draw(t, "stepSeconds")) * time.Second
	}
	m.advance(t, m.now().Add(d), false)
}

// Write starts a write of a runner that has not returned, if its fence is
// open: it lands less than LeaseDuration − RenewDeadline later.
func (m *shardModel) Write(t *rapid.T) {
	var can []*runner
	for _, ru := range m.runners {
		if !ru.finished && ru.hd.h.Fence() == nil {
			can = append(can, ru)
		}
	}
	if len(can) == 0 {
		return
	}
	m.write(t, rapid.SampledFrom(can).Draw(t, "writer"))
}

// write starts a write of ru, whose fence is open.
//
// Its delay stays below LeaseDuration − RenewDeadline, the fence's margin:
// a runner being given back may write until its fence closes, so writes
// can be in flight when its replica gives the shard back.
func (m *shardModel) write(t *rapid.T, ru *runner) {
	margin := modelLeaseDuration - modelRenewDeadline
	d := time.Duration(rapid.Int64Range(0, int64(margin/time.Millisecond)-1).Draw(t, "writeMillis")) * time.Millisecond
	m.seq++
	m.writes = append(m.writes, &write{ru: ru, started: m.now(), lands: m.now().Add(d), seq: m.seq})
	ru.inFlight++
	if d == 0 {
		m.advance(t, m.now(), false)
	}
}

// Finish makes a runner return: one whose context is done (or, rarely,
// one that gives up early), whose writes have landed, of a replica that
// has not died.
func (m *shardModel) Finish(t *rapid.T) {
	early := rapid.IntRange(0, 3).Draw(t, "early") == 0
	var can []*runner
	for _, ru := range m.runners {
		if !ru.finished && !ru.r.dead && ru.inFlight == 0 && (early || ru.ctx.Err() != nil) {
			can = append(can, ru)
		}
	}
	if len(can) == 0 {
		return
	}
	m.finish(rapid.SampledFrom(can).Draw(t, "runner"))
}

// Pause stops a replica's ticks for a while; its runners go on.
func (m *shardModel) Pause(t *rapid.T) {
	r := m.pickLive(t)
	if r == nil {
		return
	}
	r.pausedUntil = m.now().Add(time.Duration(rapid.IntRange(1, 40).Draw(t, "pauseSeconds")) * time.Second)
}

// Die stops a replica for good: it never ticks again and its runners never
// return (their writes in flight still land).
func (m *shardModel) Die(t *rapid.T) {
	if r := m.pickLive(t); r != nil {
		r.dead = true
	}
}

// Leave stops a replica that is not paused gracefully: Coordinator.stop,
// while the model lets its runners return (after their writes landed) or
// lets the clock run to stop's deadline.
func (m *shardModel) Leave(t *rapid.T) {
	r := m.pickLive(t)
	if r == nil || m.now().Before(r.pausedUntil) {
		return
	}
	r.left = true
	r.cacheAt = m.latest()
	// stop waits for the runners in the order of their shards, each until
	// it returns or until stop's deadline: the n-th timer it starts is for
	// the n-th of them (none starts after the deadline).
	r.c.mu.Lock()
	var queue []*runner
	for _, i := range slices.Sorted(maps.Keys(r.c.held)) {
		queue = append(queue, m.byHold[r.c.held[i]])
	}
	r.c.mu.Unlock()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r.c.stop(logr.Discard())
	}()
	for {
		select {
		case <-stopped:
			return
		case deadline := <-r.clk.waiting:
			ru := queue[0]
			queue = queue[1:]
			if ru.finished {
				continue // stop goes on by itself
			}
			m.awaitGiveBacks(t, r)
			returns := rapid.Bool().Draw(t, "returnsInTime")
			last := m.now()
			for _, w := range m.writes {
				if w.ru == ru && w.lands.After(last) {
					last = w.lands
				}
			}
			if returns && last.Before(deadline) {
				m.advance(t, last, false)
				m.finish(ru)
			} else {
				m.advance(t, deadline, true)
			}
		}
	}
}

// awaitGiveBacks waits, while stop waits for a runner that has not
// returned, until stop has given back the shards of r whose runners had
// returned: it gives each back on its own goroutine as soon as it sees it
// returned, and the model must not move the clock or land a write
// meanwhile.
func (m *shardModel) awaitGiveBacks(t *rapid.T, r *replica) {
	for start := time.Now(); ; runtime.Gosched() {
		r.c.mu.Lock()
		var pending []int
		for i, hd := range r.c.held {
			if isClosed(hd.done) {
				pending = append(pending, i)
			}
		}
		r.c.mu.Unlock()
		if len(pending) == 0 {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: stop has not given back shards %v, whose runners returned, in 10 s", r.id, pending)
		}
	}
}

// Settle checks liveness (3): every replica alive resumes ticking every
// RetryPeriod with an up-to-date cache, and runners told to stop return
// once their writes landed; within LeaseDuration + 2×RetryPeriod one count
// of those the live replicas run with has every shard kept by one of its
// replicas with an open fence, none keeping more than its share, and the
// live replicas of the other count keep none.
func (m *shardModel) Settle(t *rapid.T) {
	live := m.live()
	if len(live) == 0 {
		return
	}
	for _, r := range live {
		r.pausedUntil = time.Time{}
	}
	start := m.now()
	bound := modelLeaseDuration + 2*m.retry
	for {
		for _, ru := range m.runners {
			if !ru.finished && ru.r.alive() && ru.inFlight == 0 && ru.ctx.Err() != nil {
				m.finish(ru)
			}
		}
		for _, r := range live {
			r.cacheAt = m.latest()
			m.tick(t, r)
		}
		why := m.settled(live)
		if why == "" {
			return
		}
		if m.now().Sub(start) >= bound {
			t.Fatalf("(3) %v after every replica alive ticks again (%s, RetryPeriod %v): %s", m.now().Sub(start), m.countsOf(live), m.retry, why)
		}
		m.advance(t, m.now().Add(m.retry), false)
	}
}

// countsOf describes how many replicas of live run with each count.
func (m *shardModel) countsOf(live []*replica) string {
	n := map[int]int{}
	for _, r := range live {
		n[r.k]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d alive with K = %d", n[k], k))
	}
	return strings.Join(parts, ", ")
}

// settled returns "" when, for one count of those live runs with, every
// shard is kept, with an open fence, by exactly one replica of live with
// that count, none keeps more than its share, and the replicas of live with
// the other count keep none; else what is missing.
func (m *shardModel) settled(live []*replica) string {
	var own, other []*replica
	for _, r := range live {
		if r.k == m.k {
			own = append(own, r)
		} else {
			other = append(other, r)
		}
	}
	switch {
	case len(other) == 0:
		return m.settledBy(m.k, own, nil)
	case len(own) == 0:
		return m.settledBy(m.k2, other, nil)
	}
	whyK := m.settledBy(m.k, own, other)
	if whyK == "" {
		return ""
	}
	whyK2 := m.settledBy(m.k2, other, own)
	if whyK2 == "" {
		return ""
	}
	return fmt.Sprintf("neither count settled: for K = %d, %s; for K = %d, %s", m.k, whyK, m.k2, whyK2)
}

// settledBy returns "" when every shard of k is kept, with an open fence,
// by exactly one replica of keepers, none keeps more than its share of k,
// and no replica of idle keeps a shard; else what is missing.
func (m *shardModel) settledBy(k int, keepers, idle []*replica) string {
	share := (k + len(keepers) - 1) / len(keepers)
	kept := make([][]string, k)
	for _, r := range keepers {
		r.c.mu.Lock()
		n := 0
		for i, hd := range r.c.held {
			if hd.releasing.IsZero() && hd.h.Fence() == nil {
				kept[i] = append(kept[i], r.id)
				n++
			}
		}
		r.c.mu.Unlock()
		if n > share {
			return fmt.Sprintf("%s keeps %d shards, more than ceil(%d/%d)", r.id, n, k, len(keepers))
		}
	}
	for _, r := range idle {
		r.c.mu.Lock()
		var keeps []string
		for _, i := range slices.Sorted(maps.Keys(r.c.held)) {
			if r.c.held[i].releasing.IsZero() {
				keeps = append(keeps, r.c.held[i].h.shard.String())
			}
		}
		r.c.mu.Unlock()
		if len(keeps) > 0 {
			return fmt.Sprintf("%s (K = %d) keeps %v", r.id, r.k, keeps)
		}
	}
	for i, who := range kept {
		if len(who) != 1 {
			return fmt.Sprintf("shard %d/%d is kept by %v", i, k, who)
		}
	}
	return ""
}

// Check checks (2), and reports what the Coordinator's calls found of (4).
func (m *shardModel) Check(t *rapid.T) {
	if len(m.failures) > 0 {
		t.Fatal(m.failures[0])
	}
	var open []*runner
	for _, ru := range m.runners {
		if ru.hd.h.Fence() == nil {
			open = append(open, ru)
		}
	}
	for i, a := range open {
		for _, b := range open[i+1:] {
			if first, end := shardsOverlap(a.shard, b.shard); first < end {
				t.Fatalf("(2) buckets [%d, %d): two open fences at %v: %s and %s", first, end, m.rel(m.now()), m.openFence(a), m.openFence(b))
			}
		}
	}
}

// shardsOverlap returns the buckets a and b both cover, [first, end):
// none when first ≥ end.
func shardsOverlap(a, b Shard) (first, end int) {
	return max(a.first(), b.first()), min(a.end(), b.end())
}

// openFence describes ru, whose fence is open, for (2).
func (m *shardModel) openFence(ru *runner) string {
	what := fmt.Sprintf("%s (shard %v, acquisition %d", ru.r.id, ru.shard, ru.acq)
	if !ru.hd.releasing.IsZero() {
		what += ", giving it back"
	}
	return what + ")"
}

// TestModelLateWritesAfterGiveBack is the shortest schedule of a failure
// the model found: two replicas, two shards, RetryPeriod 2 s. A takes
// both; B joins and A gives shard 1 back to rebalance, but its runner does
// not return; A renews shard 1 every 2 s (its fence stays open) and at 15 s
// starts a write that lands 4 s later (within LeaseDuration −
// RenewDeadline). The Coordinator gave the shard back at 15 s, and B's
// writes landed before A's; now it closes A's fence at 15 s and gives the
// shard back one margin later, after A's write has landed.
func TestModelLateWritesAfterGiveBack(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newShardModelFixed(t, 2, 2*time.Second, 2, 2)
		a, b := m.replicas[0], m.replicas[1]
		round := func(rs ...*replica) {
			for _, r := range rs {
				r.cacheAt = m.latest()
				m.tick(t, r)
			}
			m.Check(t)
		}
		round(a, b, a) // A takes both shards, B counts two replicas, A gives shard 1 back
		var ra *runner
		for _, ru := range m.runners {
			if ru.r == a && !ru.hd.releasing.IsZero() {
				ra = ru
			}
		}
		if ra == nil {
			t.Fatal("A gives no shard back")
		}
		for range 7 {
			m.advance(t, m.now().Add(2*time.Second), false)
			round(a, b)
		}
		m.advance(t, m.now().Add(time.Second), false) // 15 s
		if err := ra.hd.h.Fence(); err != nil {
			t.Fatalf("A's fence: %v", err)
		}
		m.seq++
		m.writes = append(m.writes, &write{ru: ra, started: m.now(), lands: m.now().Add(4 * time.Second), seq: m.seq})
		ra.inFlight++
		// A closes shard 1's fence at 15 s and gives the shard back one
		// margin later: B takes it only after A's write has landed.
		aLands := m.writes[len(m.writes)-1].lands
		for range 10 {
			round(a, b)
			if rb := m.holder[shardLeaseName("g", ra.shard)]; rb != nil && rb.r == b {
				if m.now().Before(aLands) {
					t.Fatalf("shard %v: B took it at %v, before A's write lands", ra.shard, m.rel(m.now()))
				}
				m.seq++
				m.writes = append(m.writes, &write{ru: rb, started: m.now(), lands: m.now(), seq: m.seq})
				rb.inFlight++
				m.advance(t, m.now().Add(5*time.Second), false)
				m.Check(t)
				return
			}
			m.advance(t, m.now().Add(time.Second), false)
		}
		t.Fatalf("shard %v: B did not take it within 10 s", ra.shard)
	})
}

// TestModelChangeOfKRenewsAnExpiredShard is the shortest schedule of a
// failure of (2) the model finds with a change of K: A (K = 2) takes both
// its shards, and B (K = 1) sees them held and takes nothing. Neither
// ticks for LeaseDuration: A's fences close at 10 s; at 15 s B sees A's
// Leases unchanged for LeaseDuration and takes shard 0/1 (its consistent
// read shows A's Leases expired). Then A ticks: it renews its Leases,
// which nobody wrote meanwhile (B took a Lease of its own, so no Conflict
// tells A), and the renewals reopen A's fences over B's buckets.
//
// The Coordinator now checks, after a renewal that came RenewDeadline or
// more after the previous one, that no shard of another count is held
// before the fence opens again (as after a take), and gives the shard back
// if one is.
func TestModelChangeOfKRenewsAnExpiredShard(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newShardModelFixed(t, 2, 2*time.Second, 1, 1)
		m.join(t, 1)
		a, b := m.replicas[0], m.replicas[1]
		tick := func(r *replica) {
			r.cacheAt = m.latest()
			m.tick(t, r)
			m.Check(t)
		}
		tick(a) // A takes 0/2 and 1/2
		tick(b) // B sees them held: it takes nothing
		if len(a.c.Shards()) != 2 || len(b.c.Shards()) != 0 {
			t.Fatalf("A keeps %v, B keeps %v: want A both shards of 2, B none", a.c.Shards(), b.c.Shards())
		}
		m.advance(t, m.now().Add(modelLeaseDuration), false)
		tick(b) // A's Leases expired: B takes 0/1
		if len(b.c.Shards()) != 1 {
			t.Fatalf("B keeps %v at %v: want 0/1", b.c.Shards(), m.rel(m.now()))
		}
		tick(a) // A must not write for buckets B now holds
	})
}
