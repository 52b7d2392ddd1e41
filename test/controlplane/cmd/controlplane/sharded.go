package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// Sharded contenders (-replicas N -shards K): the client-go rows run as N
// replicas of rscontroller with -shards K, each a user of its own behind a
// fault proxy of its own (as the high-availability faults' replicas), their
// Leases in kube-system under a prefix of the run's own. kube-controller-
// manager and the PodSet rows stay one process: the single-leader anchor.

// shardFaults are the faults of sharded contenders, acting on one replica
// (or, rolling and re-sharding, each in turn) -fault-after into the
// scale-up.
var shardFaults = map[string]string{
	"replica-add":     "start",
	"replica-kill":    "SIGKILL",
	"replica-pause":   "SIGSTOP",
	"replica-rolling": "SIGTERM",
	"replica-reshard": "SIGTERM",
}

// shardedGate is kube-apiserver's feature gate of sharded list and watch
// (KEP-5866, alpha).
const shardedGate = "ShardedListAndWatch"

// sharding is what -replicas, -shards, -reshard and -sharded-list-and-watch
// ask for.
type sharding struct {
	replicas, shards int
	reshard          int  // -reshard: the K of -fault replica-reshard's replacements; 0: not given
	serverSide       bool // -sharded-list-and-watch
	serverSideSet    bool // given on the command line
}

// on reports whether the client-go contenders run sharded.
func (s sharding) on() bool { return s.shards > 0 }

// validate checks the flags against each other and against the fault.
func (s sharding) validate(fault string) error {
	_, replicaFault := shardFaults[fault]
	_, haFault := haFaults[fault]
	switch {
	case s.replicas < 1:
		return errors.New("want -replicas ≥ 1")
	case s.shards < 0 || s.shards > 256:
		return errors.New("want 0 ≤ -shards ≤ 256")
	case s.replicas > 1 && s.shards == 0:
		return errors.New("-replicas > 1 needs -shards > 0 (two active-passive replicas: -fault leader-kill, leader-pause or rolling-restart)")
	case replicaFault && s.shards == 0:
		return fmt.Errorf("-fault %s needs -shards > 0", fault)
	case replicaFault && s.replicas < 2:
		return fmt.Errorf("-fault %s needs -replicas ≥ 2", fault)
	case s.on() && haFault:
		return fmt.Errorf("-fault %s runs two active-passive replicas: not with -shards", fault)
	case s.on() && !replicaFault && fault != "none":
		return fmt.Errorf("-fault %s acts on one controller's proxy: with -shards only none, replica-add, replica-kill, replica-pause, replica-rolling or replica-reshard", fault)
	case fault == "replica-reshard" && (s.reshard < 1 || s.reshard > 256 || s.reshard == s.shards):
		return fmt.Errorf("-fault replica-reshard needs -reshard K2, 1 ≤ K2 ≤ 256 and other than -shards %d (got %d)", s.shards, s.reshard)
	case fault != "replica-reshard" && s.reshard != 0:
		return fmt.Errorf("-reshard is the K of -fault replica-reshard's replacements: not with -fault %s", fault)
	}
	return nil
}

// featureGates returns gates with ShardedListAndWatch set as -sharded-list-and-watch
// says: unchanged (nil stays nil) when sharding is off and the flag was not given.
func (s sharding) featureGates(gates map[string]bool) map[string]bool {
	if !s.on() && !s.serverSideSet {
		return gates
	}
	out := make(map[string]bool, len(gates)+1)
	for g, v := range gates {
		out[g] = v
	}
	out[shardedGate] = s.serverSide
	return out
}

// shardedRow reports whether contender k runs sharded under s.
func (s sharding) shardedRow(k contender) bool { return s.on() && k.program == clientGoRS }

// runPrefixes numbers the runs' Lease prefixes (every run has a control
// plane of its own; the prefix still tells the runs' Leases apart in logs).
var runPrefixes atomic.Int64

// shardLease reports whether the Lease namespace/name is a shard Lease of
// the group prefix (prefix-shard-I-of-K), of any K.
func shardLease(namespace, name, prefix string) bool {
	_, ok := shardCount(namespace, name, prefix)
	return ok
}

// shardCount returns the K of the shard Lease namespace/name of the group
// prefix (prefix-shard-I-of-K); false when it is not one.
func shardCount(namespace, name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-shard-")
	if namespace != "kube-system" || !ok {
		return 0, false
	}
	i, k, ok := strings.Cut(rest, "-of-")
	_, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(k)
	return count, ok && err1 == nil && err2 == nil
}

// shardsHeld counts the shard Leases of prefix and of k shards that each
// identity holds; a Lease of another K, left by replicas of that K, is not
// counted.
func shardsHeld(leases []coordinationv1.Lease, prefix string, k int) map[string]int {
	held := map[string]int{}
	for _, l := range leases {
		if count, ok := shardCount(l.Namespace, l.Name, prefix); !ok || count != k || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			continue
		}
		held[*l.Spec.HolderIdentity]++
	}
	return held
}

// registered reports whether id holds a replica Lease of prefix
// (prefix-replica-…): it counts among the group's replicas, and so in
// every other replica's share of the shards, whatever its K.
func registered(leases []coordinationv1.Lease, prefix, id string) bool {
	for _, l := range leases {
		if l.Namespace == "kube-system" && strings.HasPrefix(l.Name, prefix+"-replica-") &&
			l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == id {
			return true
		}
	}
	return false
}

// heldBy is how many shards ids hold together.
func heldBy(held map[string]int, ids []string) int {
	n := 0
	for _, id := range ids {
		n += held[id]
	}
	return n
}

// settled reports whether all k shards are held by ids, and each of ids
// holds one when there are enough shards for that.
func settled(held map[string]int, ids []string, k int) bool {
	total := 0
	for _, id := range ids {
		if held[id] == 0 && k >= len(ids) {
			return false
		}
		total += held[id]
	}
	return total == k
}

// rejoined is when user first wrote a shard Lease of prefix successfully
// at or after from: a paused replica taking a shard again (its renewals
// of the shards it held meet a Conflict once another replica took them).
func rejoined(evs []controlplane.AuditEvent, prefix, user string, from time.Time) (time.Time, bool) {
	return first(evs, from, func(e controlplane.AuditEvent) bool {
		return e.User == user && e.Resource == "leases" && e.Subresource == "" && shardLease(e.Namespace, e.Name, prefix) &&
			(e.Verb == "create" || e.Verb == "update" || e.Verb == "patch") && e.Code >= 200 && e.Code < 300
	})
}

// writesBetween counts user's writes to pods and ReplicaSets that arrived
// in [from, to), whatever their answer, and the pod creates among them that
// kube-apiserver accepted; a zero to means no end.
func writesBetween(evs []controlplane.AuditEvent, user string, from, to time.Time) (writes, creates int) {
	for _, e := range evs {
		if e.User != user || e.Received.Before(from) || (!to.IsZero() && !e.Received.Before(to)) || !e.Write() {
			continue
		}
		writes++
		if podCreated(e) {
			creates++
		}
	}
	return writes, creates
}

// startedLine is how rscontroller says how it runs sharded.
const startedLine = "rscontroller: running sharded, "

// filteringOf finds rscontroller's line "running sharded, K shards,
// ReplicaSets filtered server-side|client-side (why)" in its output and
// returns "server-side (why)" or "client-side (why)".
func filteringOf(output string) (string, bool) {
	for line := range strings.Lines(output) {
		_, rest, ok := strings.Cut(line, startedLine)
		if !ok {
			continue
		}
		_, f, ok := strings.Cut(rest, "ReplicaSets filtered ")
		if ok {
			return strings.TrimSpace(f), true
		}
	}
	return "", false
}

// filteringSummary counts the replicas' answers by side ("server-side ×2"),
// with every distinct reason once.
func filteringSummary(seen []string) string {
	if len(seen) == 0 {
		return "—"
	}
	count := map[string]int{}
	var why []string
	for _, s := range seen {
		side, reason, _ := strings.Cut(s, " ")
		count[side]++
		if reason != "" && !slices.Contains(why, reason) {
			why = append(why, reason)
		}
	}
	sides := make([]string, 0, len(count))
	for side := range count {
		sides = append(sides, side)
	}
	slices.Sort(sides)
	for i, side := range sides {
		sides[i] = fmt.Sprintf("%s ×%d", side, count[side])
	}
	out := strings.Join(sides, ", ")
	if len(why) > 0 {
		out += " " + strings.Join(why, " ")
	}
	return out
}

// shardResult is what a sharded run measured beyond runResult's columns.
type shardResult struct {
	replicaRSS []int64       // KiB, peak per replica slot (over its processes)
	filtering  []string      // per process started: filteringOf its output ("?" when it printed none)
	faultAt    time.Duration // from the scale-up to the fault
	joined     time.Duration // replica-add, replica-rolling: the longest wait until a new replica held a shard
	paused     time.Duration // replica-pause: how long it was stopped
	// replica-kill, replica-pause: from the signal until the other
	// replicas held every shard (polled every 250 ms): the longest an
	// owner of the stopped replica went without a holder.
	retaken time.Duration
	// replica-kill, replica-pause: the stopped process and when it was
	// signalled, and how the others synced its shards from then on.
	victim   string
	signalAt time.Time
	resynced resyncs
	// replica-pause: its writes after SIGCONT before it took a shard again
	// (until the run's end when it did not), and the pod creates accepted among them.
	pausedWrites, pausedCreates int
	rejoin                      time.Duration // replica-pause: from SIGCONT to its shard Lease write; -1: none
	// replica-reshard: from the last old-K replica's exit until the new
	// replicas held every shard of -reshard K2.
	resharded time.Duration
	// replica-reshard: the fewest old-K shards the old replicas left held
	// at the end of the waits between replacements (K: always all).
	oldHeld int
	// Per replica slot (a replaced replica's and its replacement's
	// together), over the run: its proxy's counts, of which the ReplicaSet
	// watches and lists as received from kube-apiserver are read.
	owner []faultproxy.Stats
	// The same of the full owner stream (fullStream) over the same run.
	full faultproxy.Stats
	// The graceful hand-overs from the first scale-up's start on, from the
	// replicas' logs.
	handOvers []shardHandOver
}

// ownerBytes is f of each replica slot's owner counts.
func (r shardResult) ownerBytes(f func(faultproxy.Stats) int64) []int64 {
	out := make([]int64, len(r.owner))
	for i, st := range r.owner {
		out[i] = f(st)
	}
	return out
}

// ownerWatchBytes is a proxy's ReplicaSet watch bytes, ownerListBytes its
// ReplicaSet list bytes, ownerEvents its ReplicaSet watch events after the
// lists streamed in them.
func ownerWatchBytes(st faultproxy.Stats) int64 { return st.ReplicaSetWatchBytes }

func ownerListBytes(st faultproxy.Stats) int64 { return st.ReplicaSetListBytes }

func ownerEvents(st faultproxy.Stats) int64 { return st.ReplicaSetWatchEvents }

// streamedLists is how a proxy's ReplicaSet watches streamed lists: how
// many, their objects (and the bookmark ending each), their bytes, and how
// many watches came gzip-encoded.
func streamedLists(st faultproxy.Stats) [4]int64 {
	return [4]int64{st.ReplicaSetWatchesWithInitialEvents, st.ReplicaSetInitialEvents, st.ReplicaSetInitialEventsBytes, st.ReplicaSetWatchesCompressed}
}

// slot is one replica's place: a user and its proxy, and the processes
// started in it (a replacement after a rolling restart is a new process
// and identity, the same user).
type slot struct {
	user       string
	proxy      *faultproxy.Proxy
	kubeconfig string
	procs      []string // process names = identities, in start order
	pid        int      // of the last process; 0 before the first start
	live       bool     // the last process runs and is counted
	retiredCPU time.Duration
	peakRSS    int64
}

// shardGroup is the N replicas of one sharded run. Its methods are safe for
// concurrent use (the fault acts from a goroutine of its own).
type shardGroup struct {
	cp     *controlplane.ControlPlane
	c      compareConfig
	k      contender
	client kubernetes.Interface
	prefix string

	mu    sync.Mutex
	slots []*slot
}

// shardUsers are the users of a run's replica slots.
func shardUsers(n int) []string {
	users := make([]string, n)
	for i := range users {
		users[i] = fmt.Sprintf("reconcilekit-%d", i)
	}
	return users
}

// newShardGroup makes the group's slots (a proxy per user); it starts no
// replica.
func newShardGroup(cp *controlplane.ControlPlane, c compareConfig, k contender, client kubernetes.Interface) (*shardGroup, error) {
	g := &shardGroup{cp: cp, c: c, k: k, client: client, prefix: fmt.Sprintf("compare-shards-%d", runPrefixes.Add(1))}
	for _, u := range shardUsers(c.sharding.replicas) {
		proxy, kubeconfig, err := cp.FaultProxy(u)
		if err != nil {
			return nil, err
		}
		g.slots = append(g.slots, &slot{user: u, proxy: proxy, kubeconfig: kubeconfig})
	}
	return g, nil
}

// start starts a process in slot i (its first, or a replacement) with k
// shards and returns its identity.
func (g *shardGroup) start(i, k int) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slots[i]
	name := s.user
	if len(s.procs) > 0 {
		name = fmt.Sprintf("%s-r%d", s.user, len(s.procs))
	}
	d := func(v time.Duration) string { return v.String() }
	args := append([]string{
		"-kubeconfig=" + s.kubeconfig, "-quiet=" + strconv.FormatBool(g.c.keepLogs == ""),
		"-qps=" + strconv.FormatFloat(g.c.qps, 'f', -1, 64), "-burst=" + strconv.Itoa(g.c.burst), "-workers=" + strconv.Itoa(g.c.workers),
		"-shards=" + strconv.Itoa(k),
		"-leader-elect-resource-namespace=kube-system", "-leader-elect-resource-name=" + g.prefix, "-leader-elect-identity=" + name,
		"-leader-elect-lease-duration=" + d(haLease), "-leader-elect-renew-deadline=" + d(haRenew), "-leader-elect-retry-period=" + d(haRetry),
	}, g.k.args...)
	pid, err := g.cp.StartProcess(name, g.c.rsBin, args...)
	if err != nil {
		return "", err
	}
	s.procs, s.pid, s.live = append(s.procs, name), pid, true
	return name, nil
}

// retire reads slot i's process's CPU and peak RSS into the slot's totals
// and stops counting it: before it is signalled to end.
func (g *shardGroup) retire(i int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slots[i]
	if !s.live {
		return nil
	}
	cpu, err1 := procCPU(s.pid)
	rss, err2 := procPeakRSS(s.pid)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("%s: %w", s.procs[len(s.procs)-1], err)
	}
	s.retiredCPU += cpu
	s.peakRSS = max(s.peakRSS, rss)
	s.live = false
	return nil
}

// proc is slot i's last process name ("" before its first start).
func (g *shardGroup) proc(i int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.slots[i].procs; len(p) > 0 {
		return p[len(p)-1]
	}
	return ""
}

// cpu is the CPU time of every replica process so far, live or retired.
func (g *shardGroup) cpu() (time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var sum time.Duration
	for _, s := range g.slots {
		sum += s.retiredCPU
		if s.live {
			c, err := procCPU(s.pid)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", s.user, err)
			}
			sum += c
		}
	}
	return sum, nil
}

// peakRSS is each slot's peak RSS (KiB) over its processes.
func (g *shardGroup) peakRSS() ([]int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]int64, len(g.slots))
	for i, s := range g.slots {
		out[i] = s.peakRSS
		if s.live {
			r, err := procPeakRSS(s.pid)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.user, err)
			}
			out[i] = max(out[i], r)
		}
	}
	return out, nil
}

// stats adds up the proxies' counters that compareRun reads.
func (g *shardGroup) stats() faultproxy.Stats {
	var sum faultproxy.Stats
	for _, s := range g.slots {
		st := s.proxy.Stats()
		sum.PodWatchBytesIn += st.PodWatchBytesIn
		sum.WritesFailed += st.WritesFailed
		sum.PodCreateResponsesDropped += st.PodCreateResponsesDropped
		sum.PodWatchesExpired += st.PodWatchesExpired
		sum.ReplicaSetWatchBytes += st.ReplicaSetWatchBytes
		sum.ReplicaSetListBytes += st.ReplicaSetListBytes
	}
	return sum
}

// ownerStats is each slot's proxy counts so far.
func (g *shardGroup) ownerStats() []faultproxy.Stats {
	out := make([]faultproxy.Stats, len(g.slots))
	for i, s := range g.slots {
		out[i] = s.proxy.Stats()
	}
	return out
}

// users are the slots' users.
func (g *shardGroup) users() []string {
	out := make([]string, len(g.slots))
	for i, s := range g.slots {
		out[i] = s.user
	}
	return out
}

// processOutput is one replica process's output.
type processOutput struct {
	proc, output string
}

// outputs reads every process's output, in slot and start order (a
// missing log reads empty). Call it before the control plane stops (Stop
// removes the logs).
func (g *shardGroup) outputs() []processOutput {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []processOutput
	for _, s := range g.slots {
		for _, p := range s.procs {
			b, _ := os.ReadFile(g.cp.LogPath(p))
			out = append(out, processOutput{proc: p, output: string(b)})
		}
	}
	return out
}

// filtering reads, from each process's output, how it filters owners. Call
// it before the control plane stops.
func (g *shardGroup) filtering() []string {
	var out []string
	for _, o := range g.outputs() {
		f, ok := filteringOf(o.output)
		if !ok {
			f = "?"
		}
		out = append(out, f)
	}
	return out
}

// procs are the last processes of slots.
func (g *shardGroup) procs(slots []int) []string {
	var ids []string
	for _, i := range slots {
		ids = append(ids, g.proc(i))
	}
	return ids
}

// awaitLeases lists kube-system's Leases every 250 ms until cond holds of
// them, for at most timeout. On the timeout it returns false with cond's
// account of the last list (or the last list's error); err is ctx's.
func (g *shardGroup) awaitLeases(ctx context.Context, timeout time.Duration, cond func([]coordinationv1.Lease) (bool, string)) (ok bool, last string, err error) {
	deadline := time.Now().Add(timeout)
	for {
		list, err := g.client.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
		} else if ok, last = cond(list.Items); ok {
			return true, last, nil
		}
		if time.Now().After(deadline) {
			return false, last, nil
		}
		select {
		case <-ctx.Done():
			return false, last, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitSettled waits, for at most timeout, until the live processes of
// slots hold all k shards, each one when there are enough.
func (g *shardGroup) waitSettled(ctx context.Context, slots []int, k int, timeout time.Duration) error {
	ids := g.procs(slots)
	ok, last, err := g.awaitLeases(ctx, timeout, func(leases []coordinationv1.Lease) (bool, string) {
		held := shardsHeld(leases, g.prefix, k)
		return settled(held, ids, k), fmt.Sprintf("shards of %d held: %v", k, held)
	})
	if err == nil && !ok {
		err = fmt.Errorf("waiting for %s to hold the %d shards: not after %v: %s", strings.Join(ids, ", "), k, timeout, last)
	}
	return err
}

// oldCoverWait bounds, between two replacements of -fault replica-reshard,
// the wait for the old-K replicas left to hold every old shard: free shards
// are taken at once (a Lease watch event) or at the next retry, an expired
// one after the lease duration.
const oldCoverWait = haLease + 2*haRetry

// oldCover waits, between two replacements of -fault replica-reshard,
// until replacement (a replica of another K) has its replica Lease, so
// that the old replicas count it in their share, one retry period more
// for them to give back what exceeds it, and then for at most oldCoverWait
// until the old replicas' live processes (of slots old) hold all k old
// shards. It returns how many they held at the end; fewer than k is a
// measurement, not an error.
func (g *shardGroup) oldCover(ctx context.Context, replacement string, old []int, k int) (held int, last string, err error) {
	ok, last, err := g.awaitLeases(ctx, 2*time.Minute, func(leases []coordinationv1.Lease) (bool, string) {
		return registered(leases, g.prefix, replacement), "no replica Lease of " + replacement
	})
	if err == nil && !ok {
		err = fmt.Errorf("waiting for %s to join the group: not after %v: %s", replacement, 2*time.Minute, last)
	}
	if err != nil {
		return 0, last, err
	}
	select {
	case <-ctx.Done():
		return 0, "", ctx.Err()
	case <-time.After(haRetry):
	}
	ids := g.procs(old)
	_, last, err = g.awaitLeases(ctx, oldCoverWait, func(leases []coordinationv1.Lease) (bool, string) {
		h := shardsHeld(leases, g.prefix, k)
		held = heldBy(h, ids)
		return settled(h, ids, k), fmt.Sprintf("shards of %d held: %v", k, h)
	})
	return held, last, err
}

// initial are the slots started before the workload: all but the last
// with -fault replica-add.
func (g *shardGroup) initial() []int {
	n := len(g.slots)
	if g.c.fault == "replica-add" {
		n--
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// startAll starts the initial replicas and waits until they hold the shards.
func (g *shardGroup) startAll(ctx context.Context) error {
	for _, i := range g.initial() {
		if _, err := g.start(i, g.c.sharding.shards); err != nil {
			return err
		}
	}
	return g.waitSettled(ctx, g.initial(), g.c.sharding.shards, 2*time.Minute)
}

// injectFault acts -fault-after from start (the scale-up's beginning) on
// the last slot, or on every slot in turn (replica-rolling,
// replica-reshard), and records in res what it measured. It returns once
// the fault is over: the new or replacement replicas hold shards, the
// paused one was resumed.
func (g *shardGroup) injectFault(ctx context.Context, start time.Time, label string, res *shardResult) (resumed time.Time, err error) {
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(time.Until(start.Add(g.c.faultAfter))):
	}
	last := len(g.slots) - 1
	all := make([]int, len(g.slots))
	for i := range all {
		all[i] = i
	}
	k := g.c.sharding.shards
	at := time.Now()
	res.faultAt = at.Sub(start)
	name := g.proc(last)
	fmt.Fprintf(os.Stderr, "compare: %s: -fault %s (%s) %v into the scale-up\n", label, g.c.fault, shardFaults[g.c.fault], res.faultAt.Round(10*time.Millisecond))
	switch g.c.fault {
	case "replica-add":
		if _, err := g.start(last, k); err != nil {
			return time.Time{}, err
		}
		if err := g.waitSettled(ctx, all, k, 2*time.Minute); err != nil {
			return time.Time{}, err
		}
		res.joined = time.Since(at)
	case "replica-kill":
		res.victim, res.signalAt = name, at
		if err := g.retire(last); err != nil {
			return time.Time{}, err
		}
		if err := g.cp.KillComponent(name); err != nil {
			return time.Time{}, err
		}
		if err := g.waitSettled(ctx, all[:last], k, 2*time.Minute); err != nil {
			return time.Time{}, err
		}
		res.retaken = time.Since(at)
		fmt.Fprintf(os.Stderr, "compare: %s: the other replicas held every shard %v after the SIGKILL\n", label, res.retaken.Round(10*time.Millisecond))
	case "replica-pause":
		res.victim, res.signalAt = name, at
		if err := g.cp.Signal(name, syscall.SIGSTOP); err != nil {
			return time.Time{}, err
		}
		// The others take its shards once its Leases expire; it is
		// resumed no earlier than -resume-after, past them.
		if err := g.waitSettled(ctx, all[:last], k, 2*time.Minute); err != nil {
			return time.Time{}, err
		}
		res.retaken = time.Since(at)
		fmt.Fprintf(os.Stderr, "compare: %s: the other replicas held every shard %v after the SIGSTOP\n", label, res.retaken.Round(10*time.Millisecond))
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(time.Until(at.Add(g.c.resumeAfter))):
		}
		resumed = time.Now()
		if err := g.cp.Signal(name, syscall.SIGCONT); err != nil {
			return time.Time{}, err
		}
		res.paused = resumed.Sub(at)
		fmt.Fprintf(os.Stderr, "compare: %s: SIGCONT sent to %s after %v\n", label, name, res.paused.Round(10*time.Millisecond))
		if err := g.waitSettled(ctx, all, k, 2*time.Minute); err != nil {
			return resumed, err
		}
	case "replica-rolling":
		for _, i := range all {
			old := g.proc(i)
			if err := g.retire(i); err != nil {
				return time.Time{}, err
			}
			if err := g.cp.Signal(old, syscall.SIGTERM); err != nil {
				return time.Time{}, err
			}
			if err := poll(ctx, haExitWait, old+" exiting", func() bool { return !g.cp.Running(old) }); err != nil {
				return time.Time{}, err
			}
			t := time.Now()
			if _, err := g.start(i, k); err != nil {
				return time.Time{}, err
			}
			if err := g.waitSettled(ctx, all, k, 2*time.Minute); err != nil {
				return time.Time{}, err
			}
			res.joined = max(res.joined, time.Since(t))
		}
	case "replica-reshard":
		// A replica holds no shard while a shard of another K has a live
		// holder: the replacements hold nothing until the last old one
		// has exited, and until then the old ones left are the only ones
		// that can hold the old shards.
		k2 := g.c.sharding.reshard
		res.oldHeld = k
		for _, i := range all {
			old := g.proc(i)
			if err := g.retire(i); err != nil {
				return time.Time{}, err
			}
			if err := g.cp.Signal(old, syscall.SIGTERM); err != nil {
				return time.Time{}, err
			}
			if err := poll(ctx, haExitWait, old+" exiting", func() bool { return !g.cp.Running(old) }); err != nil {
				return time.Time{}, err
			}
			exited := time.Now()
			replacement, err := g.start(i, k2)
			if err != nil {
				return time.Time{}, err
			}
			if i < last {
				held, why, err := g.oldCover(ctx, replacement, all[i+1:], k)
				if err != nil {
					return time.Time{}, err
				}
				res.oldHeld = min(res.oldHeld, held)
				if held < k {
					fmt.Fprintf(os.Stderr, "compare: %s: after %s joined with %d shards, the old replicas held %d of the %d old shards (not all within %v): %s\n", label, replacement, k2, held, k, oldCoverWait, why)
				}
				continue
			}
			if err := g.waitSettled(ctx, all, k2, 2*time.Minute); err != nil {
				return time.Time{}, err
			}
			res.resharded = time.Since(exited)
			fmt.Fprintf(os.Stderr, "compare: %s: re-sharded from %d to %d shards %v after the last old replica exited\n", label, k, k2, res.resharded.Round(10*time.Millisecond))
		}
	}
	return resumed, nil
}

// pausedAccount fills res's replica-pause counts from the audit log: the
// paused replica's (the last slot's user) writes after SIGCONT before it
// took a shard again.
func (g *shardGroup) pausedAccount(evs []controlplane.AuditEvent, resumed time.Time, res *shardResult) {
	user := g.slots[len(g.slots)-1].user
	res.rejoin = -1
	var until time.Time
	if t, ok := rejoined(evs, g.prefix, user, resumed); ok {
		until, res.rejoin = t, t.Sub(resumed)
	}
	res.pausedWrites, res.pausedCreates = writesBetween(evs, user, resumed, until)
}

// printSharded prints the sharded contenders' table, after the comparison's:
// per replica and summed over them, and what the fault did.
func printSharded(out io.Writer, c compareConfig, chosen []contender, results [][]runResult) {
	s := c.sharding
	gate := "off"
	if s.serverSide {
		gate = "on"
	}
	fmt.Fprintf(out, "\nSharded: %d replicas × %d shards, kube-apiserver feature gate %s %s, Leases in kube-system, lease %v / renew %v / retry %v",
		s.replicas, s.shards, shardedGate, gate, haLease, haRenew, haRetry)
	if v, ok := shardFaults[c.fault]; ok {
		fmt.Fprintf(out, "; fault %s (%s, %v into the scale-up)", c.fault, v, c.faultAfter)
	}
	if c.fault == "replica-reshard" {
		fmt.Fprintf(out, ", K %d → %d", s.shards, s.reshard)
	}
	fmt.Fprint(out, "\n\n")
	head := "| controller | owners filtered | peak RSS per replica, max | peak RSS per replica, mean | owner watch bytes per replica, max | owner watch bytes per replica, mean | owner watch bytes, all replicas | owner list bytes, all replicas | the full owner stream | owner watch per replica, mean ÷ the full stream: bytes, events after the lists | lists streamed in the owner watches: watches, objects, bytes, gzip-encoded watches; all replicas (the full stream's) | controller CPU, all replicas and phases | kube-apiserver CPU, all phases | writes (pod creates, deletes, status) | most pods above desired |"
	sep := "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	switch c.fault {
	case "replica-add", "replica-rolling":
		head += " new replica holding shards after | graceful hand-overs: gave back → taken, → first sync |"
		sep += "---:|---|"
	case "replica-reshard":
		head += " old-K shards held between replacements, fewest | re-sharded in |"
		sep += "---:|---:|"
	case "replica-kill":
		head += " its shards held by the others after | its shards taken, synced, the last first sync after (its start) |"
		sep += "---:|---:|"
	case "replica-pause":
		head += " its shards held by the others after | its shards taken, synced, the last first sync after (its start) | paused for | its writes after SIGCONT before it took a shard (pod creates) | it took a shard after SIGCONT |"
		sep += "---:|---:|---:|---:|---:|"
	}
	fmt.Fprintln(out, head)
	fmt.Fprintln(out, sep)
	for i, k := range chosen {
		if !s.shardedRow(k) {
			continue
		}
		rs := results[i]
		vals := func(f func(runResult) float64) []float64 {
			v := make([]float64, len(rs))
			for r := range rs {
				v[r] = f(rs[r])
			}
			return v
		}
		col := func(f func(runResult) float64, format string) string { return spread(vals(f), format) }
		var seen []string
		for _, r := range rs {
			seen = append(seen, r.shard.filtering...)
		}
		sum := func(r runResult, f func(measured) time.Duration) float64 {
			var d time.Duration
			for _, m := range r.phases {
				d += f(m)
			}
			return d.Seconds()
		}
		perReplica := func(r runResult, f func(faultproxy.Stats) int64) float64 { return meanOf(r.shard.ownerBytes(f)) }
		allReplicas := func(r runResult, f func(faultproxy.Stats) int64) float64 {
			return perReplica(r, f) * float64(len(r.shard.owner))
		}
		// lists is the lists column of the replicas' stats or the full stream's.
		lists := func(of func(r runResult) []faultproxy.Stats) string {
			part := func(i int) []float64 {
				return vals(func(r runResult) float64 {
					var n int64
					for _, st := range of(r) {
						n += streamedLists(st)[i]
					}
					return float64(n)
				})
			}
			return fmt.Sprintf("%s, %s objects, %s, %s gzip", spread(part(0), "%.0f"), spread(part(1), "%.0f"), bytesCol(part(2)), spread(part(3), "%.0f"))
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s | %s (%s) | %s | %s | %s | %s |", k.name, filteringSummary(seen),
			col(func(r runResult) float64 { return float64(slices.Max(r.shard.replicaRSS)) / 1024 }, "%.0f MiB"),
			col(func(r runResult) float64 { return meanOf(r.shard.replicaRSS) / 1024 }, "%.0f MiB"),
			bytesCol(vals(func(r runResult) float64 { return float64(slices.Max(r.shard.ownerBytes(ownerWatchBytes))) })),
			bytesCol(vals(func(r runResult) float64 { return perReplica(r, ownerWatchBytes) })),
			bytesCol(vals(func(r runResult) float64 { return allReplicas(r, ownerWatchBytes) })),
			bytesCol(vals(func(r runResult) float64 { return allReplicas(r, ownerListBytes) })),
			bytesCol(vals(func(r runResult) float64 { return float64(ownerWatchBytes(r.shard.full)) })),
			ratioCol(vals(func(r runResult) float64 { return perReplica(r, ownerWatchBytes) }), vals(func(r runResult) float64 { return float64(ownerWatchBytes(r.shard.full)) })),
			ratioCol(vals(func(r runResult) float64 { return perReplica(r, ownerEvents) }), vals(func(r runResult) float64 { return float64(ownerEvents(r.shard.full)) })),
			lists(func(r runResult) []faultproxy.Stats { return r.shard.owner }),
			lists(func(r runResult) []faultproxy.Stats { return []faultproxy.Stats{r.shard.full} }),
			col(func(r runResult) float64 { return sum(r, func(m measured) time.Duration { return m.cpu }) }, "%.2f s"),
			col(func(r runResult) float64 { return sum(r, func(m measured) time.Duration { return m.apiCPU }) }, "%.2f s"),
			col(func(r runResult) float64 {
				n := 0
				for _, m := range r.phases {
					n += m.creates + m.deletes + m.statusWrites
				}
				return float64(n)
			}, "%.0f"),
			col(func(r runResult) float64 { return float64(r.extra) }, "%.0f"))
		switch c.fault {
		case "replica-add", "replica-rolling":
			var hs []shardHandOver
			for _, r := range rs {
				hs = append(hs, r.shard.handOvers...)
			}
			row += " " + col(func(r runResult) float64 { return r.shard.joined.Seconds() }, "%.1f s") + " | " + formatHandOvers(hs) + " |"
		case "replica-reshard":
			row += fmt.Sprintf(" %s of %d | %s |", col(func(r runResult) float64 { return float64(r.shard.oldHeld) }, "%.0f"), s.shards,
				col(func(r runResult) float64 { return r.shard.resharded.Seconds() }, "%.1f s"))
		case "replica-kill":
			row += " " + col(func(r runResult) float64 { return r.shard.retaken.Seconds() }, "%.1f s") + " | " + resyncCol(rs) + " |"
		case "replica-pause":
			row += " " + col(func(r runResult) float64 { return r.shard.retaken.Seconds() }, "%.1f s") + " | " + resyncCol(rs) + " |"
			rejoin := col(func(r runResult) float64 { return r.shard.rejoin.Seconds() }, "%.1f s")
			for _, r := range rs {
				if r.shard.rejoin < 0 {
					rejoin += " (a run where it took none: -1)"
					break
				}
			}
			row += fmt.Sprintf(" %s | %s (%s) | %s |",
				col(func(r runResult) float64 { return r.shard.paused.Seconds() }, "%.1f s"),
				col(func(r runResult) float64 { return float64(r.shard.pausedWrites) }, "%.0f"),
				col(func(r runResult) float64 { return float64(r.shard.pausedCreates) }, "%.0f"), rejoin)
		}
		fmt.Fprintln(out, row)
	}
	notes := []string{
		"median, and min–max over the runs when they differ",
		"the table above shows these contenders' CPU summed over their replicas and their peak RSS as the largest replica's; its API requests by verb are summed over the replicas, by verb and resource not counted (the audit log keeps those for one user)",
		"owners filtered: what each replica process printed (rscontroller's \"ReplicaSets filtered …\"), counted over the runs",
		"writes: the replicas' pod creates, deletes and status writes that reached kube-apiserver, every phase",
		"owner watch bytes: the bytes of the ReplicaSet watch responses that each replica's proxy received from kube-apiserver over the run (a replaced replica's and its replacement's together), the most and the mean over the replicas, and their sum; owner list bytes: the same of the ReplicaSet lists, summed (as kube-apiserver sent them, compressed when it compressed them; client-go's informers list through a watch, WatchListClient being on by default, so their lists are in the watch bytes and the list bytes are the filtering probe's and any fallback list's)",
		"with the owners filtered server-side (gate on) each shard a replica holds lists and watches its own ReplicaSets, so a replica's owner watches carry only its shards' owners, about 1/N of the full stream, and all replicas' together about one full stream; filtered client-side (-sharded-list-and-watch=false) a replica's shards share one ReplicaSet watch of every owner, one full stream per replica (an rscontroller built before the shared informer: one per held shard, K/N streams per replica), so compare a run with the gate on against the same run with it off",
		"the full owner stream: the owner watch bytes of an unfiltered ReplicaSet informer of the driver's (client-go, protobuf, every namespace, behind a proxy of its own), running beside the replicas from their start to the run's end: what one replica that filtered nothing would have received in the same run; per replica ÷ the full stream: the mean replica's owner watch against it, its bytes, and its events after the lists streamed in its watches (frames of the protobuf stream, decoded when gzip-encoded, bookmarks among them: a count that does not depend on the objects' sizes, nor on how kube-apiserver compressed them), 1/N when each replica's watches carry its shards' owners alone; kube-apiserver v1.37 sends a watch that streams a list gzip-encoded, for its whole life, one gzip member per flush, so its bytes depend on how many events each flush carries (the fewer owners a watch carries, the fewer per flush), and the bytes' ratio is not the events'; lists streamed: the owner watches that began with a list (sendInitialEvents=true: an informer's first, a taken shard's, one again after an expired watch), their objects and bytes up to the bookmark ending the list (of a gzip-encoded watch, to within one read), and how many watches came gzip-encoded, all replicas, and the full stream's in brackets",
	}
	switch c.fault {
	case "replica-add":
		notes = append(notes, "replica-add: the run starts with one replica fewer; new replica holding shards: from its start until every replica holds a shard")
	case "replica-kill":
		notes = append(notes, "replica-kill: the last replica is killed; its shards are taken when their Leases expire; its shards held by the others after: from the SIGKILL until the other replicas hold every shard (Leases polled every 250 ms), the longest one of its owners went without a holder (its first sync follows once the new holder's caches have reached the Lease's record)")
	case "replica-rolling":
		notes = append(notes, "replica-rolling: each replica in turn gets SIGTERM, is waited for to exit, and is replaced by a new process and identity; new replica holding shards: the longest wait, from a replacement's start until every replica holds a shard")
	case "replica-reshard":
		notes = append(notes, fmt.Sprintf("replica-reshard: each replica in turn gets SIGTERM, is waited for to exit, and is replaced by a new process and identity with -shards=%d; a replica holds no shard while a shard of another K has a live holder, so the replacements hold nothing until the last old replica has exited; old-K shards held between replacements: after each replacement but the last, once it has a replica Lease (and so counts in the old replicas' share) and a retry period later, the run waits up to %v for the old replicas left to hold all %d old shards and notes how many they held, the fewest over the replacements (fewer than %d: owners that no replica synced until the last old replica exited); re-sharded in: from the last old replica's exit until the new replicas hold all %d shards", s.reshard, oldCoverWait, s.shards, s.shards, s.reshard))
	case "replica-pause":
		notes = append(notes, fmt.Sprintf("replica-pause: the last replica is stopped, and resumed once the others hold its shards and no earlier than %v after the SIGSTOP; its shards held by the others after: from the SIGSTOP until the other replicas hold every shard (Leases polled every 250 ms); its writes after SIGCONT are to pods and ReplicaSets, accepted or refused, until its first successful write of a shard Lease (or the run's end), from kube-apiserver's audit log", c.resumeAfter))
	}
	if c.fault == "replica-kill" || c.fault == "replica-pause" {
		notes = append(notes, "its shards taken, synced, the last first sync after: from the replicas' log lines (rscontroller -quiet keeps those of the hand-overs), the takes by the others of a shard whose Lease named the stopped replica, from the signal on, how many of them the taker synced (its \"First sync of the shard\", the first sync its caches let through), and from the signal to the end of the last of those first syncs and to its start (the line's time less the sync's duration, which it logs): the longest an owner of the stopped replica waited for a holder's first sync of its shard (the other owners of a shard follow at the pace of the workers)")
	}
	if c.fault == "replica-add" || c.fault == "replica-rolling" {
		notes = append(notes, "graceful hand-overs: every shard given back (SIGTERM, rebalance) from the scale-up's start on, all runs together, from the replicas' log lines (rscontroller -quiet keeps those of the hand-overs): how many, how many another replica took and how many it synced, and from the giver's \"Giving a shard back\" (it stops the shard's syncs, waits for its writes in flight, then writes the Lease released) to the taker's \"Took a shard\", to its \"Caches synced\" (the shard's informers) and to the start and the end of its first sync of the shard (\"First sync of the shard\", logged at the end of the first sync its caches let through, after the hand-over's consistency gate, with how long it took), the median and the longest")
	}
	if _, ok := shardFaults[c.fault]; ok {
		notes = append(notes, "kube-controller-manager (and the PodSet rows) run one process and no fault: the anchor")
	}
	fmt.Fprintf(out, "\n(%s)\n", strings.Join(notes, "; "))
}

// bytesCol is spread of the byte counts v in KiB when the largest is below
// 10 MiB, else in MiB: a small run's owner streams still show.
func bytesCol(v []float64) string {
	unit, format := float64(1<<20), "%.1f MiB"
	if slices.Max(v) < 10<<20 {
		unit, format = 1<<10, "%.0f KiB"
	}
	scaled := make([]float64, len(v))
	for i, x := range v {
		scaled[i] = x / unit
	}
	return spread(scaled, format)
}

// resyncCol is each run's resyncs: shards taken, synced, and the longest
// to a first sync, over the runs.
func resyncCol(rs []runResult) string {
	vals := func(f func(resyncs) float64) []float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r.shard.resynced)
		}
		return v
	}
	return fmt.Sprintf("%s, %s, %s (started %s)",
		spread(vals(func(r resyncs) float64 { return float64(r.shards) }), "%.0f"),
		spread(vals(func(r resyncs) float64 { return float64(r.synced) }), "%.0f"),
		spread(vals(func(r resyncs) float64 { return r.longest.Seconds() }), "%.1f s"),
		spread(vals(func(r resyncs) float64 { return r.longestStart.Seconds() }), "%.1f s"))
}

// ratioCol is spread of num[i] / den[i] to two places, or "—" when a
// denominator is 0 (nothing to hold against).
func ratioCol(num, den []float64) string {
	r := make([]float64, len(num))
	for i := range num {
		if den[i] == 0 {
			return "—"
		}
		r[i] = num[i] / den[i]
	}
	return spread(r, "%.2f")
}

// meanOf is the mean of v, 0 for none.
func meanOf(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	var sum int64
	for _, x := range v {
		sum += x
	}
	return float64(sum) / float64(len(v))
}
