// Command replicaset runs a ReplicaSet controller built from reconcilekit.
//
// By default it starts an in-process cluster (client-go's fake clientset with
// generated names, resourceVersions, graceful deletion and injected API
// faults, plus a simulated kubelet), scales a ReplicaSet 0 → 1000, deletes a
// few pods behind the controller's back and adds an orphan for it to adopt,
// scales down to 10, and prints a progress line per change and a summary.
//
// With -kubeconfig the same controller and the same scenario run against a
// real cluster. That cluster's kube-controller-manager must run with
// --controllers=*,-replicaset-controller, or the two controllers fight over
// the demo's pods. Against a real cluster leader election is on by default,
// with kube-controller-manager's flags (-leader-elect,
// -leader-elect-lease-duration, …; package examples/election): only the
// replica holding the Lease works, a replica that may have lost it writes
// nothing (fencing), SIGTERM releases the Lease and a lost Lease exits 1.
// -scenario=false runs the controller alone, until SIGTERM, as a deployment
// does.
//
// Run "replicaset -h" for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	cluster "github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/examples/election"
)

// config is everything the flags set.
type config struct {
	kubeconfig string
	namespace  string
	name       string
	replicas   int
	final      int
	disrupt    int
	minReady   int
	exact      bool
	gate       bool
	// statusInterval and eventPerBatch: issue 34's fewer writes (off by default).
	statusInterval time.Duration
	eventPerBatch  bool
	workers        int
	timeout        time.Duration
	seed           uint64
	nodes          int
	readyDelay     time.Duration
	faults         cluster.Faults
	verbosity      string
	scenario       bool
	election       election.Flags
	// shards is -shards: 0 runs one active replica behind the election's
	// Lease; K > 0 spreads the ReplicaSets over K shards held by every
	// running replica (sharded.go).
	shards int
	fence  func() error // the leader-election fence; nil without
	// metricsAddr and probeAddr: endpoints.go (off by default).
	metricsAddr, probeAddr string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("replicaset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: replicaset [flags]

A ReplicaSet controller built from reconcilekit. Without -kubeconfig it runs
an in-process cluster (fake API server + simulated kubelet) and a scripted
scenario: scale 0 → -replicas, delete -disrupt pods behind the controller's
back and add one orphan pod, scale down to -final; then it prints a summary.
With -kubeconfig the same scenario runs against a real cluster whose
kube-controller-manager runs with --controllers=*,-replicaset-controller,
with leader election on by default (kube-controller-manager's -leader-elect
flags: only the replica holding the Lease works, SIGTERM releases it, a lost
Lease exits 1); -scenario=false runs the controller alone until SIGTERM.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "path to a kubeconfig: run against that cluster instead of the in-process one")
	fs.StringVar(&c.namespace, "namespace", "default", "namespace of the demo ReplicaSet")
	fs.StringVar(&c.name, "name", "demo", "name of the demo ReplicaSet")
	fs.IntVar(&c.replicas, "replicas", 1000, "replicas to scale up to")
	fs.IntVar(&c.final, "final", 10, "replicas to scale down to at the end")
	fs.IntVar(&c.disrupt, "disrupt", 5, "pods to delete behind the controller's back at the peak (0: skip, and skip the orphan)")
	fs.IntVar(&c.minReady, "min-ready-seconds", 1, "spec.minReadySeconds of the ReplicaSet (shows the availability requeue)")
	fs.BoolVar(&c.exact, "exact", true, "exact expectations: creations tracked by pod key and EvidenceFirst expiry from the pod informer's resourceVersion (false: upstream's counters and 5-minute timeout)")
	fs.BoolVar(&c.gate, "consistency-gate", true, "defer a sync while the informers are older than the controller's own writes, as upstream v1.37 (false: as upstream's StaleControllerConsistencyReplicaSet=false)")
	fs.DurationVar(&c.statusInterval, "status-interval", 0, "write a converging ReplicaSet's status at most once per interval (the first write, a new generation, a failure and the converged status at once; 0: every change, as upstream)")
	fs.BoolVar(&c.eventPerBatch, "event-per-batch", false, "record one SuccessfulCreate event per slow-start batch instead of one per pod")
	fs.IntVar(&c.workers, "workers", 5, "concurrent sync workers")
	fs.DurationVar(&c.timeout, "timeout", 50*time.Second, "give up (exit 1) if the scenario has not converged by then")
	fs.Uint64Var(&c.seed, "seed", 1, "seed for the in-process cluster's names, faults and delays")
	fs.IntVar(&c.nodes, "nodes", 5, "in-process cluster: number of nodes")
	fs.DurationVar(&c.readyDelay, "ready-delay", 500*time.Millisecond, "in-process cluster: mean time from scheduling to Ready (each pod draws from [d/2, 3d/2])")
	fs.Float64Var(&c.faults.CreatePod, "create-fault", 0.01, "in-process cluster: fraction of pod creates that fail with 500")
	fs.Float64Var(&c.faults.CreatePodLost, "lost-create-fault", 0.005, "in-process cluster: fraction of pod creates that succeed but answer with a timeout")
	fs.Float64Var(&c.faults.DeletePod, "delete-fault", 0.01, "in-process cluster: fraction of pod deletes that fail with 500")
	fs.Float64Var(&c.faults.UpdateStatus, "status-fault", 0.01, "in-process cluster: fraction of ReplicaSet status updates that fail with 500")
	fs.BoolVar(&c.scenario, "scenario", true, "run the scripted scenario; false: run only the controller, on every namespace unless -namespace is given explicitly, until SIGTERM or SIGINT (needs -kubeconfig)")
	c.election.AddFlags(fs, "reconcilekit-replicaset")
	fs.IntVar(&c.shards, "shards", 0, "spread the ReplicaSets over this many shards, each held by one of the running replicas through its own Lease (-leader-elect-resource-namespace, -leader-elect-resource-name as the Leases' prefix, the election's durations and identity); 0: one replica works, behind the leader-election Lease (needs -kubeconfig and -scenario=false; at most 256)")
	fs.StringVar(&c.verbosity, "v", "0", "klog verbosity (stderr): 0 shows client-go's errors only (the syncs are the progress lines); 1 adds the controller's log (invalid ReplicaSet specs, expired expectations, failed syncs); 2 adds deferred syncs (caches not synced, the consistency gate); 4 adds one line per sync")
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", "0", "address of /metrics, e.g. 127.0.0.1:8080 (\"0\": off)")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", "0", "address of /healthz and /readyz, e.g. 127.0.0.1:8081 (\"0\": off)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	namespaceSet := false
	fs.Visit(func(f *flag.Flag) { namespaceSet = namespaceSet || f.Name == "namespace" })
	if !c.scenario && !namespaceSet {
		c.namespace = "" // a deployment watches every namespace
	}
	switch {
	case c.kubeconfig == "" && c.election.Explicit() && c.election.Enabled:
		return c, errors.New("-leader-elect needs -kubeconfig: the in-process demo runs one replica")
	case c.kubeconfig == "" && !c.scenario:
		return c, errors.New("-scenario=false needs -kubeconfig")
	case c.shards < 0 || c.shards > 256:
		return c, errors.New("-shards must lie in [0, 256]")
	case c.shards > 0 && c.scenario:
		return c, errors.New("-shards needs -scenario=false (and -kubeconfig): the sharded replicas run as a deployment does")
	case c.shards > 0 && c.election.Explicit() && c.election.Enabled:
		return c, errors.New("-shards replaces -leader-elect: each shard has its own Lease")
	}
	// On by default against a real cluster, as kube-controller-manager;
	// with -shards the shards' Leases take its place (its flags still
	// name them).
	if err := c.election.Resolve(c.kubeconfig != "" && c.shards == 0); err != nil {
		return c, err
	}
	switch {
	case c.replicas < 0 || c.final < 0 || c.disrupt < 0 || c.minReady < 0:
		return c, errors.New("-replicas, -final, -disrupt and -min-ready-seconds must not be negative")
	case c.disrupt > c.replicas:
		return c, errors.New("-disrupt must not exceed -replicas")
	}
	for _, r := range []float64{c.faults.CreatePod, c.faults.CreatePodLost, c.faults.DeletePod, c.faults.UpdateStatus} {
		if r < 0 || r > 0.5 {
			return c, errors.New("fault rates must lie in [0, 0.5]")
		}
	}
	return c, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicaset:", err)
		os.Exit(2)
	}
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if err := klogFlags.Set("v", cfg.verbosity); err != nil {
		fmt.Fprintln(os.Stderr, "replicaset: -v:", err)
		os.Exit(2)
	}
	defer klog.Flush()

	// SIGTERM cancels: the scenario stops, the Lease is released.
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "replicaset:", err)
		klog.Flush()
		os.Exit(1)
	}
}

// run builds the clientset (in-process or real) and runs the scenario, or
// the controller alone; with leader election, only while leading.
func run(ctx context.Context, cfg config, out io.Writer) error {
	if cfg.kubeconfig == "" {
		ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
		return runInProcess(ctx, cfg, out)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return err
	}
	if cfg.shards > 0 {
		return runSharded(ctx, cfg, rc, out)
	}
	var lock *fencing.Lock
	if cfg.election.Enabled {
		// Before the controller's clientset is built: it gets the fenced
		// transport.
		if lock, err = cfg.election.Fence(rc); err != nil {
			return err
		}
	}
	// 1000 pods; client-go's defaults (QPS 5, burst 10) would take minutes.
	rc.QPS = 100
	rc.Burst = 200
	// Protobuf for the built-in types this controller reads and writes, as
	// kube-controller-manager talks to the API server (JSON stays accepted).
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	// Served before the election: a standby replica answers /healthz, and
	// /readyz fails until it leads and its caches have synced.
	srv, err := startServing(cfg, out)
	if err != nil {
		return err
	}
	defer srv.stop()
	lead := func(ctx context.Context) error {
		if !cfg.scenario {
			return serve(ctx, cfg, client, srv, out)
		}
		ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
		fmt.Fprintf(out, "reconcilekit ReplicaSet demo on %s (namespace %s)\n", rc.Host, cfg.namespace)
		return scenario(ctx, cfg, client, nil, srv, out)
	}
	if lock == nil {
		return lead(ctx)
	}
	cfg.fence = lock.Fence
	// /healthz fails once the leader has not renewed the Lease for 20 s
	// past its renew deadline, as kube-controller-manager's check.
	health := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	cfg.election.Health = health
	srv.server.AddHealthzCheck("leaderElection", health.Check)
	return cfg.election.Run(ctx, lock, lead)
}

func runInProcess(ctx context.Context, cfg config, out io.Writer) error {
	cl := cluster.New(cfg.seed, cfg.faults)
	kubelet := cluster.NewKubelet(cl.Clientset, cluster.KubeletOptions{
		Nodes:            cfg.nodes,
		ReadyDelay:       cfg.readyDelay,
		TerminationDelay: 200 * time.Millisecond,
		Seed:             cfg.seed,
	})
	kctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		kubelet.Run(kctx)
	}()
	defer func() {
		stop()
		<-done
	}()

	fmt.Fprintf(out, "reconcilekit ReplicaSet demo — in-process cluster: %d nodes, pods ready after ~%v, faults: create %.1f%%, lost create %.1f%%, delete %.1f%%, status %.1f%%; seed %d\n",
		cfg.nodes, cfg.readyDelay, 100*cfg.faults.CreatePod, 100*cfg.faults.CreatePodLost,
		100*cfg.faults.DeletePod, 100*cfg.faults.UpdateStatus, cfg.seed)
	srv, err := startServing(cfg, out)
	if err != nil {
		return err
	}
	defer srv.stop()
	return scenario(ctx, cfg, cl.Clientset, cl, srv, out)
}
