package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// program is what a contender runs.
type program int

const (
	upstreamRS program = iota // kube-controller-manager's replicaset-controller
	clientGoRS                // the examples' client-go ReplicaSet controller (e2e/testdata/rscontroller)
	podSetCR                  // the examples' controller-runtime PodSet controller (examples/podset)
)

// A contender is one controller under comparison, started as a process of
// its own whose API traffic goes through a fault proxy. The table of them,
// contenders, is the one place a row is defined: a variant of a program is
// one line with its extra flags.
type contender struct {
	key     string // its name for -contenders (an index works too)
	name    string
	program program
	args    []string // extra flags
	// needs are flags (without "-") that the program's -h must list for
	// the row to run: the opt-ins of rows defined before every program
	// has them; a row whose program lacks one is refused by name.
	needs  []string
	haOnly bool // runs only with the high-availability faults (two replicas)
}

// kind is the kind of owner the contender reconciles.
func (k contender) kind() ownerKind {
	if k.program == podSetCR {
		return podSets
	}
	return replicaSets
}

// ownedLabel is the label (key=value) the PodSet rows with owned-only pod caches stamp
// on their pods and select their pod cache by.
const ownedLabel = "compare.reconcilekit.dev/owned=true"

var contenders = []contender{
	{key: "kcm", name: "kube-controller-manager v1.37.2", program: upstreamRS},
	{key: "kcm-nogate", name: "kube-controller-manager, StaleControllerConsistencyReplicaSet=false", program: upstreamRS,
		args: []string{"--feature-gates=StaleControllerConsistencyReplicaSet=false"}},
	{key: "clientgo", name: "reconcilekit, defaults", program: clientGoRS, args: []string{"-exact=false"}},
	{key: "clientgo-exact", name: "reconcilekit, TrackCreations + EvidenceFirst", program: clientGoRS, args: []string{"-exact=true"}},
	{key: "podset", name: "reconcilekit PodSet (controller-runtime), defaults", program: podSetCR, args: []string{"-exact=false"}},
	// Only with the high-availability faults: what the fence buys.
	{key: "clientgo-nofence", name: "reconcilekit, defaults, no fence", program: clientGoRS, args: []string{"-exact=false", "-fence=false"}, haOnly: true},
	// Issue 34's opt-ins: owned-only and lean pod caches, then the writes.
	{key: "podset-lean", name: "reconcilekit PodSet, owned-only + lean pods", program: podSetCR,
		args: []string{"-exact=false", "-owned-pods-label=" + ownedLabel, "-lean-pods"}, needs: []string{"owned-pods-label", "lean-pods"}},
	{key: "podset-lean-writes", name: "reconcilekit PodSet, owned-only + lean pods + fewer writes", program: podSetCR,
		args:  []string{"-exact=false", "-owned-pods-label=" + ownedLabel, "-lean-pods", "-status-interval=3s", "-event-per-batch"},
		needs: []string{"owned-pods-label", "lean-pods", "status-interval", "event-per-batch"}},
	// Both examples record core/v1 events (since v0.1.0 the PodSet's too,
	// which before wrote through the events API's series): one event per
	// slow-start batch instead of one per pod.
	{key: "clientgo-writes", name: "reconcilekit, defaults + fewer writes", program: clientGoRS,
		args:  []string{"-exact=false", "-status-interval=3s", "-event-per-batch"},
		needs: []string{"status-interval", "event-per-batch"}},
}

// contenderIndex finds a contender by its key or its index in contenders.
func contenderIndex(s string) (int, error) {
	s = strings.TrimSpace(s)
	for i, k := range contenders {
		if k.key == s {
			return i, nil
		}
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 || i >= len(contenders) {
		keys := make([]string, len(contenders))
		for j, k := range contenders {
			keys[j] = k.key
		}
		return 0, fmt.Errorf("%q is neither a contender (%s) nor an index 0–%d", s, strings.Join(keys, ", "), len(contenders)-1)
	}
	return i, nil
}

// defaultContenders are the indices run without -contenders: for one
// owner the four make compare has always run; for a fleet, upstream, the
// client-go example and the PodSet example, each with defaults.
func defaultContenders(fleet bool) []int {
	if fleet {
		return []int{0, 2, 4}
	}
	return []int{0, 1, 2, 3}
}

// driverWorkers is how many of the driver's own writes (owner creates and
// scales, pod deletes) are in flight at once; the driver's client is not
// rate-limited below driverQPS.
const (
	driverWorkers = 16
	driverQPS     = 1000
)

// compareConfig is what every run of every contender shares.
type compareConfig struct {
	workload
	runs, parallel          int
	qps                     float64
	burst, workers          int
	phaseTimeout            time.Duration
	fault                   string
	lag, touch, touchEvery  time.Duration
	faultAfter, resumeAfter time.Duration // the high-availability faults (ha.go)
	rsBin, podSetBin        string
	podSetCRD               string
	podSetFlags             map[string]bool // which of -qps, -burst, -workers, -pprof-bind-address the PodSet binary has
	rsFlags                 map[string]bool // which of the chosen rows' needs the client-go binary has
	opts                    controlplane.Options
	profile                 profiling
	crowd                   crowd // -unrelated
	pprofPort               int   // of the run's contender, with -profile
	bindNodes               bool  // -bind-nodes: the pods name their node; no kube-scheduler
	sharding                sharding
	keepLogs                string // -keep-logs: where each run's process logs are copied
}

// nodeFor is the node that the j-th owner's pods are bound to: "" (the
// scheduler's choice) unless -bind-nodes, then the kwok nodes in turn.
func (c *compareConfig) nodeFor(j int) string {
	if !c.bindNodes {
		return ""
	}
	return controlplane.NodeName(j % c.opts.Nodes)
}

// phase is one step of the workload: create the owners, set their
// replicas or delete pods, then wait for every owner's converged status.
type phase struct {
	name    string
	desired int  // every owner's replicas
	create  bool // the owners are created, at 0
	disrupt int  // pods deleted behind the controller's back
	// lostEvent makes the phase scenario (b): the one pod the controller
	// creates for it is created and deleted while the controller's pod
	// watch is held, and the watch's history is then gone; the time is
	// measured from the watch's release.
	lostEvent bool
}

// measured is what one phase of one run cost.
type measured struct {
	took                                  time.Duration
	creates, deletes, statusWrites, fails int
	cpu                                   time.Duration
	apiCPU                                time.Duration           // kube-apiserver's CPU time: the cluster's cost
	podWatchBytes                         int64                   // of the controller's pod watches, received by its proxy from kube-apiserver
	requests                              controlplane.VerbCounts // the controller's API requests by verb
	byResource                            controlplane.VerbCounts // and by verb and resource
}

type runResult struct {
	phases   []measured
	peakRSS  int64 // KiB, VmHWM
	extra    int   // most live pods above desired, summed over the owners (podTally)
	extraOne int   // most live pods above desired of one owner
	crowd    crowdResult
	shard    shardResult // of a sharded contender (sharded.go)
}

func runCompare(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var c compareConfig
	var sf startFlags
	sf.register(fs, 0)
	fs.IntVar(&c.runs, "runs", 3, "runs per contender (medians and min–max are printed)")
	fs.IntVar(&c.parallel, "parallel", 1, "runs at once, each on its own control plane (for the long fault scenarios; times and CPU then include the contention)")
	fs.IntVar(&c.owners, "owners", 1, "owners (ReplicaSets, or PodSets for the PodSet contender) in the one namespace; above 1 the fleet workload: all created at 0, all scaled to -pods, -disrupt of their pods deleted, all scaled to -final")
	fs.IntVar(&c.pods, "pods", 1000, "replicas of each owner to scale up to (10000 for the large single-owner variant)")
	fs.IntVar(&c.final, "final", 10, "replicas of each owner to scale down to (default 1 with -owners > 1)")
	fs.IntVar(&c.disrupt, "disrupt", 5, "pods deleted behind the controller's back at the peak, spread over the owners (default 10% of the pods with -owners > 1)")
	fs.Float64Var(&c.qps, "qps", 100, "client QPS of every contender (--kube-api-qps, rest.Config.QPS)")
	fs.IntVar(&c.burst, "burst", 200, "client burst of every contender (--kube-api-burst, rest.Config.Burst)")
	fs.IntVar(&c.workers, "workers", 5, "sync workers of every contender (--concurrent-replicaset-syncs, -workers)")
	fs.DurationVar(&c.phaseTimeout, "phase-timeout", 0, "give up on a phase that has not converged by then (default 5m, or 40 ms per pod of -owners × -pods when longer)")
	fs.DurationVar(&c.lag, "lag", 5*time.Minute+30*time.Second, "-fault informer-lag: how long the controller's pod watch is delayed during the scale-up")
	fs.DurationVar(&c.touch, "touch", 5*time.Minute+10*time.Second, "-fault informer-lag: when, after the scale-up began, the ReplicaSet is touched (an annotation) to make the controller sync")
	fs.StringVar(&c.fault, "fault", "none", "fault injected between each controller and kube-apiserver: none; informer-lag (the controller's pod watch is delayed by -lag during the scale-up, past the 5-minute expectations expiry, and the ReplicaSet is touched at -touch; kubernetes#129795; -owners 1 only); lost-creates (the responses of the first 50 pod creates of the scale-up are dropped after the API server applied them); failing-writes (10% of the controller's writes fail with 500, throughout); lost-event (a last phase scales up by one while the controller's pod watch is held; that pod is deleted, and the watch's resume is refused as expired, so the controller lists again and never sees the pod; the ReplicaSet is touched every -touch-every until the controller makes progress; -owners 1 only); and, with each contender as two replicas behind a Lease (lease 15s, renew 10s, retry 2s), each its own user behind its own proxy, on the 0 → -pods scale-up alone: leader-kill (SIGKILL to the leader -fault-after into the scale-up), leader-pause (SIGSTOP to the leader -fault-after in; SIGCONT once the other replica holds the lease and the ReplicaSet converged, at the earliest -resume-after after the SIGSTOP), rolling-restart (SIGTERM to the leader -fault-after in); contenders 0–3 and 5, -owners 1 only; and, with -shards > 0 and -replicas ≥ 2, for the client-go contenders (kube-controller-manager runs unharmed, the anchor), -fault-after into the first scale-up: replica-add (the run starts with -replicas − 1 and the last is started then), replica-kill (SIGKILL to the last replica), replica-pause (SIGSTOP to the last replica, SIGCONT once the others hold its shards and no earlier than -resume-after; its writes after SIGCONT before it takes a shard again are counted), replica-rolling (SIGTERM to each replica in turn, a replacement started once it exited, the next once every replica holds shards), replica-reshard (K changed: as replica-rolling, but every replacement runs with -shards=-reshard; as a replica holds no shard while one of another K is held, the replacements hold nothing until the last old replica exited: between replacements the run waits, bounded, for the old replicas left to hold every old shard and notes how many they held; then it times the re-shard, from the last old replica's exit until the new replicas hold every new shard)")
	fs.DurationVar(&c.faultAfter, "fault-after", 3*time.Second, "-fault leader-kill, leader-pause, rolling-restart: when, after the scale-up began, the leader is stopped")
	fs.DurationVar(&c.resumeAfter, "resume-after", haLease+10*time.Second, "-fault leader-pause: the shortest pause of the leader (it is resumed once the other replica leads and the ReplicaSet converged, and no earlier than this)")
	fs.DurationVar(&c.touchEvery, "touch-every", 2*time.Second, "-fault lost-event: how often the ReplicaSet is touched (an annotation) to make the controller sync")
	fs.BoolVar(&c.bindNodes, "bind-nodes", false, "-owners > 1: every owner's pod template names a kwok node (the owners in turn over the nodes) and kube-scheduler does not run, for fleets larger than kube-scheduler can bind on the machine within the phase timeout (the pods then become Ready at the pace of the controllers and kwok alone)")
	fs.StringVar(&c.profile.dir, "profile", "", "write a CPU profile of each contender's controller during the first scale-up, and a heap profile once it converged, into this directory (one file of each per run; go tool pprof -top reads them)")
	fs.IntVar(&c.profile.seconds, "profile-seconds", 30, "-profile: seconds of each CPU profile, from the start of its phase")
	fs.StringVar(&c.profile.phase, "profile-phase", "scale-up", "-profile: the phase whose CPU is profiled: scale-up, or replace (the pods deleted behind the controller's back and replaced)")
	only := fs.String("contenders", "", "comma-separated contenders to run, by key or index (see the list above; default kcm,kcm-nogate,clientgo,clientgo-exact with -owners 1, kcm,clientgo,podset with more, kcm,clientgo,clientgo-nofence with the high-availability faults; clientgo-nofence only with those)")
	fs.IntVar(&c.crowd.pods, "unrelated", 0, "pods owned by something else (a ConfigMap; label role=unrelated, in namespace "+unrelatedNamespace+", bound to nodes of their own) created before each run's contender starts: a crowded cluster")
	fs.Float64Var(&c.crowd.failed, "unrelated-failed", 0.25, "-unrelated: the share of them Failed (the rest Running and Ready)")
	c.crowd.churn = 50
	fs.Var(rateFlag{&c.crowd.churn}, "unrelated-churn", "-unrelated: status updates a second on them, in turn, during the phases (N, N/s or N/m; 0: none; at most 2000/s)")
	fs.DurationVar(&c.crowd.timeout, "unrelated-timeout", 0, "-unrelated: give up when creating them takes longer (default 2m plus 20 ms per pod)")
	fs.IntVar(&c.sharding.replicas, "replicas", 1, "with -shards: replicas of each client-go contender (rscontroller -shards K), each a user of its own behind a fault proxy of its own, the Leases in kube-system under a prefix of the run's (lease 15s, renew 10s, retry 2s); kube-controller-manager and the PodSet rows ignore it: one process, the single-leader anchor")
	fs.IntVar(&c.sharding.shards, "shards", 0, "shards of the client-go contenders' owners over their -replicas (adapters/sharding; 1–256); 0: not sharded, today's table. kube-controller-manager and the PodSet rows ignore it")
	fs.IntVar(&c.sharding.reshard, "reshard", 0, "-fault replica-reshard: the shards K2 of the replacements (1–256, other than -shards); required with that fault, refused with any other")
	fs.BoolVar(&c.sharding.serverSide, "sharded-list-and-watch", true, "with -shards: kube-apiserver's feature gate ShardedListAndWatch (KEP-5866) on, so that each replica asks it for its shards' owners; false: off, the replicas filter owners themselves (every control plane of the run gets the gate, kube-controller-manager's too)")
	fs.StringVar(&c.keepLogs, "keep-logs", "", "copy every process log of each run (kube-apiserver's, the contender's, each replica's) into DIR/<run>/ before its control plane is removed; the sharded replicas then also print their syncs and their klog lines (which costs them CPU: a run to diagnose, not to measure)")
	examples := fs.String("examples", "", "the examples module (default: examples/ found above the working directory)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: controlplane compare [flags]\n\nContenders:\n")
		for i, k := range contenders {
			fmt.Fprintf(fs.Output(), "  %d  %-18s %s", i, k.key, k.name)
			if len(k.needs) > 0 {
				fmt.Fprintf(fs.Output(), " (needs the program's -%s)", strings.Join(k.needs, ", -"))
			}
			fmt.Fprintln(fs.Output())
		}
		fmt.Fprintf(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.lostEvent = c.fault == "lost-event"
	c.applyFleetDefaults(set)
	if c.crowd.timeout == 0 {
		c.crowd.timeout = 2*time.Minute + time.Duration(c.crowd.pods)*20*time.Millisecond
	}
	if err := errors.Join(c.validate(), c.crowd.validate()); err != nil {
		return fmt.Errorf("controlplane: compare: %w", err)
	}
	if c.runs < 1 || c.parallel < 1 || c.touchEvery <= 0 || c.phaseTimeout < 0 {
		return errors.New("controlplane: compare: want -runs ≥ 1, -parallel ≥ 1, -touch-every > 0, -phase-timeout ≥ 0")
	}
	if c.phaseTimeout == 0 {
		c.phaseTimeout = c.workload.phaseTimeout()
	}
	if c.profile.dir != "" {
		if c.profile.seconds < 1 {
			return errors.New("controlplane: compare: want -profile-seconds ≥ 1")
		}
		if c.profile.phase != "scale-up" && c.profile.phase != "replace" {
			return fmt.Errorf("controlplane: compare: -profile-phase %q: want scale-up or replace", c.profile.phase)
		}
		if err := os.MkdirAll(c.profile.dir, 0o755); err != nil {
			return fmt.Errorf("controlplane: compare: -profile: %w", err)
		}
	}
	if sf.nodes == 0 {
		sf.nodes = c.nodes()
	}
	switch c.fault {
	case "none", "lost-creates", "failing-writes", "lost-event":
	case "informer-lag":
		if c.fleet() {
			return errors.New("controlplane: compare: -fault informer-lag needs -owners 1")
		}
	case "replica-add", "replica-kill", "replica-pause", "replica-rolling", "replica-reshard":
		if c.faultAfter <= 0 || c.resumeAfter <= 0 {
			return errors.New("controlplane: compare: want -fault-after > 0 and -resume-after > 0")
		}
	case "leader-kill", "leader-pause", "rolling-restart":
		if c.fleet() {
			return fmt.Errorf("controlplane: compare: -fault %s needs -owners 1", c.fault)
		}
		if c.faultAfter <= 0 || c.resumeAfter < 0 {
			return errors.New("controlplane: compare: want -fault-after > 0 and -resume-after ≥ 0")
		}
	default:
		return fmt.Errorf("controlplane: compare: -fault: unknown fault %q", c.fault)
	}
	c.sharding.serverSideSet = set["sharded-list-and-watch"]
	if err := c.sharding.validate(c.fault); err != nil {
		return fmt.Errorf("controlplane: compare: %w", err)
	}
	if c.sharding.on() && c.profile.dir != "" {
		return errors.New("controlplane: compare: -profile profiles one process: not with -shards")
	}
	_, ha := haFaults[c.fault]
	if ha && c.crowd.pods > 0 {
		return fmt.Errorf("controlplane: compare: -unrelated does not run with -fault %s", c.fault)
	}
	var chosen []contender
	if *only == "" && ha {
		chosen = []contender{contenders[0], contenders[2], contenders[5]}
	} else if *only == "" {
		for _, i := range defaultContenders(c.fleet()) {
			chosen = append(chosen, contenders[i])
		}
	} else {
		for _, s := range strings.Split(*only, ",") {
			i, err := contenderIndex(s)
			if err != nil {
				return fmt.Errorf("controlplane: compare: -contenders: %w", err)
			}
			if ha && contenders[i].program == podSetCR {
				return fmt.Errorf("controlplane: compare: -fault %s: contender %d (%s) has no leader election here", c.fault, i, contenders[i].name)
			}
			if !ha && contenders[i].haOnly {
				return fmt.Errorf("controlplane: compare: contender %d (%s) runs only with -fault leader-kill, leader-pause or rolling-restart", i, contenders[i].name)
			}
			chosen = append(chosen, contenders[i])
		}
	}
	var err error
	if c.opts, err = sf.options(); err != nil {
		return err
	}
	c.opts.FeatureGates = c.sharding.featureGates(c.opts.FeatureGates)
	if c.bindNodes {
		if !c.fleet() {
			return errors.New("controlplane: compare: -bind-nodes needs -owners > 1")
		}
		c.opts.DisableScheduler = true
	}
	// kwok's pods turn Ready once and stay so only while no one else
	// touches them: the node lifecycle controller marks every pod of a node
	// NotReady when the node's heartbeat is older than this grace period
	// (50 s by default; seen a minute into a 1000-pod run on 2 busy cores),
	// and nothing makes them Ready again. Node health is not what is
	// compared here.
	if c.opts.ExtraArgs == nil {
		c.opts.ExtraArgs = map[string][]string{}
	}
	c.opts.ExtraArgs[controlplane.KubeControllerManager] = append(c.crowd.controllerManagerArgs(),
		c.opts.ExtraArgs[controlplane.KubeControllerManager]...) // -arg's come last and win
	if *examples == "" {
		if *examples, err = findExamples(); err != nil {
			return err
		}
	}
	start := time.Now()
	bins, err := controlplane.Build(ctx, controlplane.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	c.opts.Binaries, c.opts.AuditWrites = &bins, true
	tmp, err := os.MkdirTemp("", "reconcilekit-compare-")
	if err != nil {
		return fmt.Errorf("controlplane: compare: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := c.buildContenders(ctx, *examples, tmp, chosen); err != nil {
		return err
	}
	if ha {
		results, err := runAll(ctx, c, chosen, func(ctx context.Context, k contender, label string) (haResult, error) {
			return haRun(ctx, c, k, label)
		})
		if err != nil {
			return err
		}
		printHA(out, c, chosen, results, time.Since(start))
		return nil
	}
	phases := c.phases()
	results, err := runAll(ctx, c, chosen, func(ctx context.Context, k contender, label string) (runResult, error) {
		return compareRun(ctx, c, k, phases, label)
	})
	if err != nil {
		return err
	}
	printComparison(out, c, chosen, phases, results, time.Since(start))
	if slices.ContainsFunc(chosen, c.sharding.shardedRow) {
		printSharded(out, c, chosen, results)
	}
	return nil
}

// buildContenders builds, inside the examples module, the programs the
// chosen contenders run, into dir, and asks the PodSet example which of
// the shared client and worker flags it has.
func (c *compareConfig) buildContenders(ctx context.Context, examples, dir string, chosen []contender) error {
	build := func(what, out, pkg string) error {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = examples, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("controlplane: compare: building %s: %w", what, err)
		}
		return nil
	}
	for _, k := range chosen {
		switch {
		case k.program == clientGoRS && c.rsBin == "":
			c.rsBin = filepath.Join(dir, "rscontroller")
			if err := build("the examples' client-go controller", c.rsBin,
				filepath.Join("..", "test", "controlplane", "e2e", "testdata", "rscontroller", "main.go")); err != nil {
				return err
			}
			hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			usage, _ := exec.CommandContext(hctx, c.rsBin, "-h").CombinedOutput() // -h exits 0 or 2 by the flag package's choice
			cancel()
			var want []string
			for _, k := range chosen {
				want = append(want, k.needs...)
			}
			c.rsFlags = flagsInUsage(string(usage), want...)
		case k.program == podSetCR && c.podSetBin == "":
			c.podSetBin = filepath.Join(dir, "podset")
			if err := build("the examples' PodSet controller", c.podSetBin, "./podset"); err != nil {
				return err
			}
			c.podSetCRD = filepath.Join(examples, filepath.FromSlash(podSetCRD))
			hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			usage, _ := exec.CommandContext(hctx, c.podSetBin, "-h").CombinedOutput() // -h exits 0 or 2 by the flag package's choice
			cancel()
			want := []string{"qps", "burst", "workers", "pprof-bind-address"}
			for _, k := range chosen {
				want = append(want, k.needs...)
			}
			c.podSetFlags = flagsInUsage(string(usage), want...)
			for _, f := range []string{"qps", "burst", "workers"} {
				if !c.podSetFlags[f] {
					fmt.Fprintf(os.Stderr, "compare: the PodSet example has no -%s flag: it runs with controller-runtime's default\n", f)
				}
			}
		}
	}
	for _, k := range chosen {
		for _, f := range k.needs {
			have := c.podSetFlags
			if k.program == clientGoRS {
				have = c.rsFlags
			}
			if !have[f] {
				return fmt.Errorf("controlplane: compare: contender %s (%s) needs the program's -%s flag, which its -h does not list", k.key, k.name, f)
			}
		}
	}
	return nil
}

// runAll runs every contender c.runs times with run, c.parallel runs at once, and
// returns each contender's results. The runs start round-robin over the
// contenders, so that a slow spell of the machine is shared rather than
// landing on one of them. The first error cancels the other runs.
func runAll[R any](ctx context.Context, c compareConfig, chosen []contender, run func(ctx context.Context, k contender, label string) (R, error)) ([][]R, error) {
	type job struct{ run, i int }
	jobs := make(chan job)
	results := make([][]R, len(chosen))
	for i := range results {
		results[i] = make([]R, c.runs)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var workers sync.WaitGroup
	for range c.parallel {
		workers.Go(func() {
			for j := range jobs {
				k := chosen[j.i]
				fmt.Fprintf(os.Stderr, "compare: run %d/%d: %s\n", j.run+1, c.runs, k.name)
				r, err := run(ctx, k, fmt.Sprintf("%s, run %d", k.name, j.run+1))
				if err != nil {
					cancel(fmt.Errorf("controlplane: compare: %s, run %d: %w", k.name, j.run+1, err))
					continue
				}
				results[j.i][j.run] = r
			}
		})
	}
feed:
	for run := range c.runs {
		for i := range chosen {
			select {
			case jobs <- job{run, i}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	workers.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return results, nil
}

// startContender starts k's controller process with kubeconfig and returns its pid.
func startContender(cp *controlplane.ControlPlane, c compareConfig, k contender, kubeconfig string) (int, error) {
	qps, burst, workers := strconv.FormatFloat(c.qps, 'f', -1, 64), strconv.Itoa(c.burst), strconv.Itoa(c.workers)
	var pprof []string
	if c.pprofPort != 0 {
		pprof, _ = pprofArgs(c, k, c.pprofPort)
	}
	switch k.program {
	case upstreamRS:
		return cp.StartReplicaSetController("replicaset-controller", kubeconfig, append(append([]string{
			"--kube-api-qps=" + qps, "--kube-api-burst=" + burst, "--concurrent-replicaset-syncs=" + workers,
		}, k.args...), pprof...)...)
	case clientGoRS:
		return cp.StartProcess("reconcilekit", c.rsBin, append(append([]string{
			"-kubeconfig=" + kubeconfig, "-quiet", "-qps=" + qps, "-burst=" + burst, "-workers=" + workers,
		}, k.args...), pprof...)...)
	default:
		args := []string{"-kubeconfig=" + kubeconfig}
		for f, v := range map[string]string{"qps": qps, "burst": burst, "workers": workers} {
			if c.podSetFlags[f] {
				args = append(args, "-"+f+"="+v)
			}
		}
		return cp.StartProcess("reconcilekit-podset", c.podSetBin, append(append(args, k.args...), pprof...)...)
	}
}

// compareRun runs the workload once against a fresh control plane.
// label names the run in the progress lines on stderr.
func compareRun(ctx context.Context, c compareConfig, k contender, phases []phase, label string) (runResult, error) {
	sharded := c.sharding.shardedRow(k)
	_, replicaFault := shardFaults[c.fault]
	replicaFault = replicaFault && sharded
	opts := c.opts
	if sharded {
		opts.Users = slices.Clone(opts.Users)
		for _, u := range append(shardUsers(c.sharding.replicas), streamUser) {
			opts.Users = append(opts.Users, controlplane.User{Name: u}) // Groups nil: system:masters
		}
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return runResult{}, err
	}
	defer cp.Stop()
	if c.keepLogs != "" {
		defer keepLogs(cp.Dir(), filepath.Join(c.keepLogs, logDirName(label)))
	}
	kind := k.kind()
	// The driver's own client, straight to kube-apiserver.
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = driverQPS, driverQPS
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return runResult{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return runResult{}, err
	}
	if kind == podSets {
		// Before the controller starts: its cache needs the kind.
		if err := applyCRD(ctx, dyn, c.podSetCRD, 2*time.Minute); err != nil {
			return runResult{}, fmt.Errorf("the PodSet CRD: %w", err)
		}
	}
	var res runResult
	// A crowded cluster before the controller starts: its informers list
	// the unrelated pods as they would in a busy cluster.
	unrelated, err := c.crowd.populate(ctx, client, &res.crowd)
	if err != nil {
		return res, err
	}
	if c.crowd.pods > 0 {
		fmt.Fprintf(os.Stderr, "compare: %s: %d unrelated pods (%d Failed) in %v\n", label, res.crowd.created, res.crowd.failed, res.crowd.took.Round(100*time.Millisecond))
	}
	apiPID, ok := cp.PID(controlplane.KubeAPIServer)
	if !ok {
		return res, errors.New("kube-apiserver is not running")
	}
	// The controller: one process behind the proxy of ControllerUser, or
	// (sharded) -replicas processes, each behind its user's proxy, read
	// through ctrlCPU, proxyStats and users.
	var (
		proxy *faultproxy.Proxy
		group *shardGroup
		full  *fullStream
		pid   int
	)
	ctrlCPU := func() (time.Duration, error) { return procCPU(pid) }
	proxyStats := func() faultproxy.Stats { return proxy.Stats() }
	users := []string{controlplane.ControllerUser}
	if sharded {
		if group, err = newShardGroup(cp, c, k, client); err != nil {
			return runResult{}, err
		}
		if err := group.startAll(ctx); err != nil {
			return runResult{}, err
		}
		// The full owner stream, beside the replicas from here to the end.
		if full, err = startFullStream(ctx, cp, 2*time.Minute); err != nil {
			return runResult{}, err
		}
		defer full.close()
		ctrlCPU, proxyStats, users = group.cpu, group.stats, group.users()
	} else {
		var kubeconfig string
		if proxy, kubeconfig, err = cp.FaultProxy(controlplane.ControllerUser); err != nil {
			return runResult{}, err
		}
		if c.profile.dir != "" {
			if _, ok := pprofArgs(c, k, 0); ok {
				if c.pprofPort, err = freeLoopbackPort(); err != nil {
					return runResult{}, err
				}
			} else {
				fmt.Fprintf(os.Stderr, "compare: %s: -profile: the program serves no profiles; none taken\n", label)
			}
		}
		if pid, err = startContender(cp, c, k, kubeconfig); err != nil {
			return runResult{}, err
		}
	}
	var profiles sync.WaitGroup
	defer profiles.Wait()
	const ns = "compare"
	for _, n := range []string{ns, ns + "-warmup"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			return runResult{}, err
		}
	}
	w, err := watchLive(ctx, client, ns)
	if err != nil {
		return runResult{}, err
	}
	defer w.stop()
	ow, err := watchOwners(ctx, dyn, kind, ns)
	if err != nil {
		return runResult{}, err
	}
	defer ow.stop()
	names := c.ownerNames()
	// The controller is up once it has written the status of generation 1:
	// of the one owner, or of a warm-up owner in a namespace of its own
	// before a fleet is created (a phase then).
	if c.fleet() {
		err = warmUp(ctx, dyn, kind, ns+"-warmup", c.nodeFor(0), 2*time.Minute)
	} else if _, err = dyn.Resource(kind.gvr).Namespace(ns).Create(ctx, kind.object(names[0], 0, ""), metav1.CreateOptions{}); err == nil {
		err = waitConverged(ctx, ow, w, names, 0, 0, 2*time.Minute)
	}
	if err != nil {
		return runResult{}, fmt.Errorf("the controller did not take the %s up: %w", kind.kind, err)
	}

	switch c.fault {
	case "lost-creates":
		proxy.DropPodCreateResponses(50)
	case "failing-writes":
		if err := proxy.FailWrites(0.1, 500); err != nil {
			return runResult{}, err
		}
	}
	churn := startChurn(ctx, client, unrelated, c.crowd.churn)
	defer churn.Stop() // on failure; stopping twice is harmless
	var lagging sync.WaitGroup
	defer lagging.Wait()
	lagCtx, endLag := context.WithCancel(ctx)
	defer endLag()
	scaleUp := 0 // the index of the first scale-up, where -fault informer-lag acts
	if c.fleet() {
		scaleUp = 1
	}
	cpuPhase := c.profile.cpuPhase(phases, scaleUp)
	// The replica fault (sharded.go) acts from a goroutine of its own
	// during the scale-up; its results are read once it has returned.
	var (
		faulting sync.WaitGroup
		faultRes shardResult
		resumed  time.Time
		faultErr error
	)
	defer faulting.Wait()
	faultCtx, endFault := context.WithCancel(ctx)
	defer endFault()
	var scaleUpStart time.Time // the graceful hand-overs are timed from here on
	for i, ph := range phases {
		if i == scaleUp {
			scaleUpStart = time.Now()
		}
		stats0 := proxyStats()
		before, err := cp.Audit()
		if err != nil {
			return res, err
		}
		cpu0, err := ctrlCPU()
		if err != nil {
			return res, err
		}
		api0, err := procCPU(apiPID)
		if err != nil {
			return res, fmt.Errorf("kube-apiserver: %w", err)
		}
		if i == cpuPhase && c.pprofPort != 0 {
			path := profilePath(c.profile.dir, "cpu", label)
			profiles.Go(func() {
				if err := fetchCPUProfile(ctx, cp, k, c.pprofPort, c.profile.seconds, path); err != nil {
					fmt.Fprintf(os.Stderr, "compare: %s: -profile: %v\n", label, err)
					return
				}
				fmt.Fprintf(os.Stderr, "compare: %s: CPU profile of %s written to %s\n", label, ph.name, path)
			})
		}
		adds := 0
		w.resetAdds() // before the action: its replacements may come at once
		t0 := time.Now()
		switch {
		case ph.lostEvent:
			if t0, err = loseEvent(ctx, dyn, kind, proxy, w, ns, names[0], ph.desired); err != nil {
				return res, fmt.Errorf("%s: %w", ph.name, err)
			}
			adds = 1 // the controller's replacement of the pod lost
			lagging.Go(func() { touchEvery(lagCtx, dyn, kind, ns, names[0], c.touchEvery) })
		case ph.disrupt > 0:
			victims := spreadPick(w.livePods(), ph.disrupt)
			if len(victims) < ph.disrupt {
				return res, fmt.Errorf("%s: only %d live pods", ph.name, len(victims))
			}
			if err := forEach(ctx, len(victims), driverWorkers, func(ctx context.Context, j int) error {
				return client.CoreV1().Pods(ns).Delete(ctx, victims[j], metav1.DeleteOptions{})
			}); err != nil {
				return res, fmt.Errorf("%s: %w", ph.name, err)
			}
			adds = ph.disrupt
		case ph.create:
			w.setDesired(ph.desired)
			if err := forEach(ctx, len(names), driverWorkers, func(ctx context.Context, j int) error {
				_, err := dyn.Resource(kind.gvr).Namespace(ns).Create(ctx, kind.object(names[j], ph.desired, c.nodeFor(j)), metav1.CreateOptions{})
				return err
			}); err != nil {
				return res, fmt.Errorf("%s: %w", ph.name, err)
			}
		default:
			w.setDesired(ph.desired)
			if i == scaleUp && c.fault == "informer-lag" {
				proxy.SetPodWatchDelay(c.lag)
			}
			if err := forEach(ctx, len(names), driverWorkers, func(ctx context.Context, j int) error {
				return kind.scale(ctx, dyn, ns, names[j], ph.desired)
			}); err != nil {
				return res, fmt.Errorf("%s: %w", ph.name, err)
			}
			if i == scaleUp && c.fault == "informer-lag" {
				lagging.Go(func() { lagScenario(lagCtx, dyn, kind, proxy, ns, names[0], c.lag, c.touch) })
			}
		}
		timeout := c.phaseTimeout
		if i == scaleUp && c.fault == "informer-lag" {
			timeout += c.lag
		}
		if i == scaleUp && replicaFault {
			faulting.Go(func() {
				resumed, faultErr = group.injectFault(faultCtx, t0, label, &faultRes)
			})
			timeout += c.faultAfter + c.resumeAfter + time.Duration(c.sharding.replicas)*(haExitWait+haLease)
			if c.fault == "replica-reshard" {
				// The owners of old shards left unheld wait for the last replacement.
				timeout += time.Duration(c.sharding.replicas) * (oldCoverWait + haRetry)
			}
		}
		if ph.lostEvent {
			timeout += expectationsTTL
		}
		if err := waitConverged(ctx, ow, w, names, ph.desired, adds, timeout); err != nil {
			return res, fmt.Errorf("%s: %w", ph.name, err)
		}
		took := time.Since(t0)
		fmt.Fprintf(os.Stderr, "compare: %s: %s converged in %v\n", label, ph.name, took.Round(10*time.Millisecond))
		if i == scaleUp && replicaFault {
			faulting.Wait()
			if faultErr != nil {
				return res, fmt.Errorf("%s: -fault %s: %w", ph.name, c.fault, faultErr)
			}
			res.shard = faultRes
			// What a resumed or replaced replica did is undone by then.
			if err := waitConverged(ctx, ow, w, names, ph.desired, 0, c.phaseTimeout); err != nil {
				return res, fmt.Errorf("%s, after the fault: %w", ph.name, err)
			}
		}
		if i == scaleUp && c.pprofPort != 0 {
			path := profilePath(c.profile.dir, "heap", label)
			if err := fetchHeapProfile(ctx, cp, k, c.pprofPort, path); err != nil {
				fmt.Fprintf(os.Stderr, "compare: %s: -profile: %v\n", label, err)
			} else {
				fmt.Fprintf(os.Stderr, "compare: %s: heap profile after %s written to %s\n", label, ph.name, path)
			}
		}
		if ph.lostEvent {
			endLag() // stop touching
			if proxy.Stats().PodWatchesExpired == 0 {
				return res, fmt.Errorf("%s: no event was lost: no pod watch of the controller's resumed from before the loss", ph.name)
			}
		}
		cpu1, err := ctrlCPU()
		if err != nil {
			return res, err
		}
		api1, err := procCPU(apiPID)
		if err != nil {
			return res, fmt.Errorf("kube-apiserver: %w", err)
		}
		after, err := cp.Audit()
		if err != nil {
			return res, err
		}
		d := after.Writes.Since(before.Writes)
		m := measured{
			took:       took,
			cpu:        cpu1 - cpu0,
			apiCPU:     api1 - api0,
			requests:   after.Requests.Since(before.Requests),
			byResource: after.ResourceRequests.Since(before.ResourceRequests),
		}
		for _, u := range users {
			m.creates += d.Sum(u, "create", "pods", "", 0)
			m.deletes += d.Sum(u, "delete", "pods", "", 0)
			m.statusWrites += d.Sum(u, "update", kind.gvr.Resource, "status", 0)
		}
		if sharded {
			// The audit log counts requests by resource for ControllerUser alone.
			m.requests = userRequests(after, users).Since(userRequests(before, users))
			m.byResource = controlplane.VerbCounts{}
		}
		for wr, n := range d {
			if slices.Contains(users, wr.User) && wr.Code >= 400 {
				m.fails += n
			}
		}
		// Writes the proxy failed or whose response it dropped never
		// show as failures in the audit log.
		stats1 := proxyStats()
		m.fails += int(stats1.WritesFailed-stats0.WritesFailed) + int(stats1.PodCreateResponsesDropped-stats0.PodCreateResponsesDropped)
		m.podWatchBytes = stats1.PodWatchBytesIn - stats0.PodWatchBytesIn
		res.phases = append(res.phases, m)
	}
	churn.Stop()
	res.crowd.churned, res.crowd.churnSkipped, res.crowd.churnFailed = int(churn.sent.Load()), int(churn.skipped.Load()), int(churn.failed.Load())
	res.extra, res.extraOne = w.maxExtra()
	if !sharded {
		if res.peakRSS, err = procPeakRSS(pid); err != nil {
			return res, err
		}
		return res, nil
	}
	if res.shard.replicaRSS, err = group.peakRSS(); err != nil {
		return res, err
	}
	res.peakRSS = slices.Max(res.shard.replicaRSS)
	res.shard.owner, res.shard.full = group.ownerStats(), full.stats()
	res.shard.filtering = group.filtering()
	lines := group.logLines(scaleUpStart)
	res.shard.handOvers = pairHandOvers(lines, scaleUpStart)
	if res.shard.victim != "" {
		res.shard.resynced = resyncsOf(lines, res.shard.victim, res.shard.signalAt)
	}
	if !resumed.IsZero() {
		time.Sleep(time.Second) // kube-apiserver logs a request after answering it
		evs, err := cp.AuditEvents()
		if err != nil {
			return res, err
		}
		group.pausedAccount(evs, resumed, &res.shard)
	}
	return res, nil
}

// userRequests adds up the requests by verb of users.
func userRequests(a controlplane.AuditCounts, users []string) controlplane.VerbCounts {
	out := controlplane.VerbCounts{}
	for _, u := range users {
		for v, n := range a.UserRequests[u] {
			out[v] += n
		}
	}
	return out
}

// warmUp creates an owner at 0 in ns, its pods bound to node unless "", and
// waits, for at most timeout, until its controller has written its status.
func warmUp(ctx context.Context, dyn dynamic.Interface, kind ownerKind, ns, node string, timeout time.Duration) error {
	const name = "warmup"
	r := dyn.Resource(kind.gvr).Namespace(ns)
	if _, err := r.Create(ctx, kind.object(name, 0, node), metav1.CreateOptions{}); err != nil {
		return err
	}
	last := ""
	err := poll(ctx, timeout, "the warm-up owner's status", func() bool {
		u, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false
		}
		s := statusOf(u)
		last = s.String()
		return s.observed >= 1 && s.at(0)
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %s", err, last)
	}
	return err
}

// lagScenario touches the owner at touch (a sync past the expectations'
// expiry, while the pod watch still lags) and lifts the watch delay at lag.
func lagScenario(ctx context.Context, dyn dynamic.Interface, kind ownerKind, proxy *faultproxy.Proxy, ns, name string, lag, touch time.Duration) {
	t0 := time.Now()
	sleep := func(until time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(t0.Add(until))):
			return true
		}
	}
	if touch < lag && sleep(touch) {
		kind.touch(ctx, dyn, ns, name)
	}
	sleep(lag)
	proxy.SetPodWatchDelay(0)
}

// expectationsTTL is how long upstream's expectations wait for missed
// events: the longest scenario (b) can take under that policy.
const expectationsTTL = 5 * time.Minute

// loseEvent makes the controller miss a pod for good: with its pod watches
// cut and held, the owner is scaled to desired (one more), the pod the
// controller creates is deleted at once, and the watch's history up to
// that deletion is declared gone (a resume from before it is answered 410
// Expired); then the pods added are counted from 0 and the hold is
// released, at the time returned. The controller's informer lists again,
// finds neither the pod nor its deletion, and the controller's expectation
// of that pod's add is never met by an event.
func loseEvent(ctx context.Context, dyn dynamic.Interface, kind ownerKind, proxy *faultproxy.Proxy, w *liveWatch, ns, name string, desired int) (time.Time, error) {
	proxy.HoldPodWatches(true)
	defer proxy.HoldPodWatches(false) // on failure; releasing twice is harmless
	proxy.CutPodWatches()
	before := map[string]bool{}
	for _, p := range w.livePods() {
		before[p] = true
	}
	w.setDesired(desired)
	if err := kind.scale(ctx, dyn, ns, name, desired); err != nil {
		return time.Time{}, err
	}
	var victim string
	if err := poll(ctx, time.Minute, "the controller's new pod", func() bool {
		for _, p := range w.livePods() {
			if !before[p] {
				victim = p
				return true
			}
		}
		return false
	}); err != nil {
		return time.Time{}, err
	}
	pods := dyn.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(ns)
	if err := pods.Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		return time.Time{}, err
	}
	if err := poll(ctx, time.Minute, "the new pod's deletion", func() bool {
		return !slices.Contains(w.livePods(), victim)
	}); err != nil {
		return time.Time{}, err
	}
	// A list's version is the store's current one, past the deletion.
	list, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return time.Time{}, err
	}
	if err := proxy.ExpirePodWatchesBefore(list.GetResourceVersion()); err != nil {
		return time.Time{}, err
	}
	w.resetAdds()
	proxy.HoldPodWatches(false)
	return time.Now(), nil
}

// touchEvery touches the owner (an annotation) every interval until ctx
// ends, so that the controller syncs it: what any event would do.
func touchEvery(ctx context.Context, dyn dynamic.Interface, kind ownerKind, ns, name string, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		kind.touch(ctx, dyn, ns, name)
	}
}

// poll waits, every 50 ms and for at most timeout, until cond holds.
func poll(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not after %v", what, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// waitConverged waits until every owner's status shows its generation with
// desired replicas, all ready and available, the watch counts desired live
// pods of each (and no others), and at least adds pods were added since
// the phase began.
func waitConverged(ctx context.Context, ow *ownerWatch, w *liveWatch, names []string, desired, adds int, timeout time.Duration) error {
	last := ""
	err := poll(ctx, timeout, fmt.Sprintf("%d owner(s) at %d replicas", len(names), desired), func() bool {
		done, first := 0, ""
		for _, n := range names {
			s, ok := ow.get(n)
			live := w.liveOf(n)
			if ok && s.at(desired) && live == desired {
				done++
			} else if first == "" {
				first = fmt.Sprintf("%s: %s, %d live pods", n, s, live)
				if !ok {
					first = n + ": not seen"
				}
			}
		}
		live, added := w.counts()
		last = fmt.Sprintf("%d of %d owner(s) converged (first not: %s); %d live pods, %d added", done, len(names), first, live, added)
		return done == len(names) && live == desired*len(names) && added >= adds
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %s", err, last)
	}
	return err
}

// procCPU is the user and system CPU time pid has used, from /proc/pid/stat
// (clock ticks of 10 ms, USER_HZ = 100 on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("the controller process is gone: %w", err)
	}
	// The command name (field 2) may hold spaces; fields after its ')' are plain.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// procPeakRSS is pid's peak resident set size in KiB (VmHWM).
func procPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("the controller process is gone: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// printComparison prints one Markdown table: per contender and phase the
// median and the min–max over the runs.
func printComparison(out io.Writer, c compareConfig, chosen []contender, phases []phase, results [][]runResult, took time.Duration) {
	size := fmt.Sprintf("%d pods", c.pods)
	if c.fleet() {
		size = fmt.Sprintf("%d owners × %d pods", c.owners, c.pods)
	}
	if c.bindNodes {
		size += " bound to their nodes by the template (no kube-scheduler)"
	}
	fmt.Fprintf(out, "make compare: fault %s; %d run(s) per contender, %d at once, %s, %d nodes, client QPS %g burst %d, %d workers; %s; took %v\n\n",
		c.fault, c.runs, c.parallel, size, c.opts.Nodes, c.qps, c.burst, c.workers, time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	one, oneSep := "", ""
	if c.fleet() {
		one, oneSep = " most above desired, one owner |", "---:|"
	}
	if c.crowd.pods > 0 {
		fmt.Fprintf(out, "Unrelated pods: %d per run (%d Failed), created before the contender started; status churn %g/s during the phases.\n\n",
			c.crowd.pods, c.crowd.failedCount(), c.crowd.churn)
	}
	fmt.Fprintf(out, "| controller | phase | time to converged status | pod creates | pod deletes | status writes | CPU | kube-apiserver CPU | pod watch data | peak RSS | most pods above desired |%s failed writes | API requests by verb | API requests by verb and resource |\n", one)
	fmt.Fprintf(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s---:|---|---|\n", oneSep)
	for i, k := range chosen {
		rs := results[i]
		for j, ph := range phases {
			col := func(f func(measured) float64) []float64 {
				v := make([]float64, len(rs))
				for r := range rs {
					v[r] = f(rs[r].phases[j])
				}
				return v
			}
			perRun := func(f func(runResult) float64, format string) string {
				if j > 0 {
					return ""
				}
				v := make([]float64, len(rs))
				for r := range rs {
					v[r] = f(rs[r])
				}
				return spread(v, format)
			}
			extraOne := ""
			if c.fleet() {
				extraOne = " " + perRun(func(r runResult) float64 { return float64(r.extraOne) }, "%.0f") + " |"
			}
			verbs := make([]map[string]int, len(rs))
			byResource := make([]map[string]int, len(rs))
			for r := range rs {
				verbs[r], byResource[r] = rs[r].phases[j].requests, rs[r].phases[j].byResource
			}
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s %s | %s | %s |\n", k.name, ph.name,
				spread(col(func(m measured) float64 { return m.took.Seconds() }), "%.1f s"),
				spread(col(func(m measured) float64 { return float64(m.creates) }), "%.0f"),
				spread(col(func(m measured) float64 { return float64(m.deletes) }), "%.0f"),
				spread(col(func(m measured) float64 { return float64(m.statusWrites) }), "%.0f"),
				spread(col(func(m measured) float64 { return m.cpu.Seconds() }), "%.2f s"),
				spread(col(func(m measured) float64 { return m.apiCPU.Seconds() }), "%.2f s"),
				spread(col(func(m measured) float64 { return float64(m.podWatchBytes) / (1 << 20) }), "%.1f MiB"),
				perRun(func(r runResult) float64 { return float64(r.peakRSS) / 1024 }, "%.0f MiB"),
				perRun(func(r runResult) float64 { return float64(r.extra) }, "%.0f"),
				extraOne,
				spread(col(func(m measured) float64 { return float64(m.fails) }), "%.0f"),
				formatVerbs(verbs), formatVerbs(byResource))
		}
	}
	fmt.Fprint(out, "\n(median, and min–max over the runs when they differ; peak RSS and pods above desired are per run, shown on the first phase")
	if c.fleet() {
		fmt.Fprint(out, "; pods above desired: the most at one moment summed over the owners, and the most of any one owner")
	}
	fmt.Fprint(out, "; CPU is the controller process's user+system time from /proc, kube-apiserver CPU that of the run's kube-apiserver in the same phase; pod watch data the bytes of the controller's pod watch responses its proxy received, what its informer decoded and handed to its event handlers; writes are the controller's own that reached kube-apiserver, from its audit log; failed writes add those the fault proxy failed or whose response it dropped; API requests by verb: the medians of the controller's requests of every kind, from the audit log, a watch counted when it starts; by verb and resource: the same with the resource and subresource")
	if c.podSetFlags != nil {
		var missing []string
		for _, f := range []string{"qps", "burst", "workers"} {
			if !c.podSetFlags[f] {
				missing = append(missing, "-"+f)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(out, "; the PodSet example has no %s flag and ran with controller-runtime's default", strings.Join(missing, ", "))
		}
	}
	fmt.Fprintln(out, ")")
	if c.crowd.pods > 0 {
		fmt.Fprintln(out)
		for i, k := range chosen {
			var took, created, failed, churned, skipped, refused []float64
			for _, r := range results[i] {
				took = append(took, r.crowd.took.Seconds())
				created = append(created, float64(r.crowd.created))
				failed = append(failed, float64(r.crowd.failed))
				churned = append(churned, float64(r.crowd.churned))
				skipped = append(skipped, float64(r.crowd.churnSkipped))
				refused = append(refused, float64(r.crowd.churnFailed))
			}
			fmt.Fprintf(out, "Unrelated pods, %s: %s created (%s Failed) in %s; churn: %s status updates, %s skipped (writers busy), %s refused\n",
				k.name, spread(created, "%.0f"), spread(failed, "%.0f"), spread(took, "%.1f s"),
				spread(churned, "%.0f"), spread(skipped, "%.0f"), spread(refused, "%.0f"))
		}
	}
}

// spread formats the median of v, and its range when the values differ.
func spread(v []float64, format string) string {
	s := slices.Clone(v)
	slices.Sort(s)
	med := median(s)
	out := fmt.Sprintf(format, med)
	if s[0] != s[len(s)-1] {
		lo, hi := fmt.Sprintf(format, s[0]), fmt.Sprintf(format, s[len(s)-1])
		unit := ""
		if i := strings.IndexByte(lo, ' '); i >= 0 {
			unit, lo, hi = lo[i:], lo[:i], hi[:strings.IndexByte(hi, ' ')]
		}
		out += fmt.Sprintf(" (%s–%s%s)", lo, hi, unit)
	}
	return out
}
