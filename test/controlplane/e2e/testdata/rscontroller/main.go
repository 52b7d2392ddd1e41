// Command rscontroller runs the examples' ReplicaSet controller
// (examples/replicaset/controller) alone, without the demo's scripted
// scenario, until SIGTERM or SIGINT: the e2e tests drive the cluster
// themselves. It is built inside the examples module (go build of this file
// from examples/), so it uses exactly the examples' dependencies.
//
// Every sync with an error, every write and every status change is printed to
// stdout as one line, for the test's log.
//
// With -leader-elect it is one replica of several behind a Lease, with the
// example's leader election (package examples/election: kube-controller-
// manager's flags and defaults, lease 15s / renew 10s / retry 2s, Lease
// kube-system/reconcilekit-replicaset, released on SIGTERM or SIGINT, exit
// status 1 on a lost lease) and its fence (reconcile.Config.Fence and the
// transport guard; -fence=false leaves leader election alone, as
// kube-controller-manager has it). Unlike the example, its informers start
// and sync before it waits for the lease, so that a replica that takes over
// syncs at once; the controller runs only while it leads. -leader-elect is
// off by default here (on with -kubeconfig in the example): the e2e tests
// run many of these on one cluster, each for its own namespace.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/examples/election"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/endpoints"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	namespace := flag.String("namespace", "", "namespace to watch (\"\": all)")
	exact := flag.Bool("exact", true, "exact expectations")
	workers := flag.Int("workers", 5, "sync workers")
	ttl := flag.Duration("expectations-ttl", 0, "expectations timeout (0: upstream's 5 minutes)")
	gate := flag.Bool("consistency-gate", true, "defer syncs while the informers are older than the controller's own writes (upstream's StaleControllerConsistencyReplicaSet)")
	qps := flag.Float64("qps", 100, "client QPS (rest.Config.QPS)")
	burst := flag.Int("burst", 200, "client burst (rest.Config.Burst)")
	quiet := flag.Bool("quiet", false, "print no line per sync and discard the controller's klog lines but, with -shards, those of its hand-overs (make compare measures the controller's CPU, and times the hand-overs)")
	statusInterval := flag.Duration("status-interval", 0, "write a converging ReplicaSet's status at most once per interval (reconcile.Config.StatusInterval; 0: every change, as upstream)")
	eventPerBatch := flag.Bool("event-per-batch", false, "one SuccessfulCreate event per slow-start batch instead of one per pod")
	pprofAddress := flag.String("pprof-address", "", "serve net/http/pprof's /debug/pprof/ on this address, e.g. 127.0.0.1:0 (the address is printed; \"\": off)")
	var le election.Flags
	le.AddFlags(flag.CommandLine, "reconcilekit-replicaset")
	shards := flag.Int("shards", 0, "spread the ReplicaSets over this many shards, each held by one replica through its own Lease (controller.RunSharded; the -leader-elect-* flags place and time the Leases, -leader-elect-resource-name is their prefix); 0: not sharded")
	fence := flag.Bool("fence", true, "with -leader-elect: fence the replica's writes (examples/election: reconcile.Config.Fence and the transport guard); false: leader election alone, as kube-controller-manager")
	srv := &endpoints.Server{}
	flag.StringVar(&srv.MetricsAddr, "metrics-bind-address", "0", "address of /metrics (\"0\": off); the address bound is printed")
	flag.StringVar(&srv.ProbeAddr, "health-probe-bind-address", "0", "address of /healthz and /readyz (\"0\": off); the address bound is printed")
	flag.Parse()
	if *shards > 0 && le.Enabled {
		fmt.Fprintln(os.Stderr, "rscontroller: -shards replaces -leader-elect")
		os.Exit(2)
	}
	if err := le.Resolve(false); err != nil {
		fmt.Fprintln(os.Stderr, "rscontroller:", err)
		os.Exit(2)
	}
	if *pprofAddress != "" {
		if err := servePprof(*pprofAddress); err != nil {
			fmt.Fprintln(os.Stderr, "rscontroller:", err)
			os.Exit(1)
		}
	}
	opts := controller.Options{Exact: *exact, ExpectationsTTL: *ttl, DisableConsistencyGate: !*gate, StatusInterval: *statusInterval, EventPerBatch: *eventPerBatch}
	if err := run(*kubeconfig, *namespace, *workers, float32(*qps), *burst, *quiet, le, *fence, *shards, srv, opts); err != nil {
		fmt.Fprintln(os.Stderr, "rscontroller:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string, workers int, qps float32, burst int, quiet bool, le election.Flags, fence bool, shards int, srv *endpoints.Server, opts controller.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// The endpoints come up before anything else, so that /readyz is seen
	// failing until the caches have synced.
	reg := prometheus.NewRegistry()
	srv.Gatherer = reg
	if srv.MetricsAddr != "" && srv.MetricsAddr != endpoints.Off {
		opts.Metrics = reg
	}
	var ctrl *controller.Controller
	var ready sync.Mutex // guards ctrl until it is built
	srv.AddReadyzCheck("caches", func(*http.Request) error {
		ready.Lock()
		defer ready.Unlock()
		if ctrl == nil || !ctrl.Ready() {
			return errors.New("the informers' caches have not synced")
		}
		return nil
	})
	if err := srv.Start(ctx); err != nil {
		return err
	}
	defer srv.Wait()
	defer srv.Stop()
	if u := srv.MetricsURL(); u != "" {
		fmt.Println("rscontroller: metrics on " + u)
	}
	if u := srv.ProbeURL(); u != "" {
		fmt.Println("rscontroller: probes on " + u)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = qps, burst
	// As kube-controller-manager: protobuf for the built-in types, and
	// caches without managedFields (below).
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	var lock *fencing.Lock
	if le.Enabled {
		// Before the controller's clientset is built, as in the example.
		if lock, err = newLock(rc, &le, fence); err != nil {
			return err
		}
		if fence {
			opts.Fence = lock.Fence
		}
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "reconcilekit-replicaset"})

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTransform(clientgo.TrimManagedFields))
	var mu sync.Mutex
	opts.Recorder = recorder
	opts.OnSync = func(r controller.Report) {
		if quiet {
			return
		}
		d := r.Sync.Diff
		if r.Err == nil && !r.Wrote && d == 0 && r.Adopted == 0 && r.Released == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("sync %s found=%t desired=%d diff=%d adopted=%d released=%d wrote=%t replicas=%d ready=%d available=%d err=%v\n",
			r.Key, r.Found, r.Desired, d, r.Adopted, r.Released, r.Wrote,
			r.Status.Replicas, r.Status.ReadyReplicas, r.Status.AvailableReplicas, r.Err)
	}
	if shards > 0 {
		return runSharded(ctx, rc, namespace, workers, quiet, shards, le, opts)
	}
	c, err := controller.New(client, factory, opts)
	if err != nil {
		return err
	}
	ready.Lock()
	ctrl = c
	ready.Unlock()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	fmt.Println("rscontroller: running")
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the %v cache did not sync", typ)
		}
	}
	fmt.Println("rscontroller: caches synced")
	if quiet {
		ctx = klog.NewContext(ctx, logr.Discard())
	}
	if lock == nil {
		return ctrl.Run(ctx, workers)
	}
	err = le.Run(ctx, lock, func(ctx context.Context) error { return ctrl.Run(ctx, workers) })
	stop() // a lost lease leaves ctx running: the informers stop with it, before their factory's Shutdown
	return err
}

// newLock is the example's fenced Lease lock (examples/election); with
// fence the controller's clients get its transport guard, without it the
// lock's fence is never asked, and only leader election remains. Either way
// it sets le.Leases, so that a standby takes a released Lease at once.
func newLock(rc *rest.Config, le *election.Flags, fence bool) (*fencing.Lock, error) {
	if fence {
		return le.Fence(rc)
	}
	leaseClient, err := kubernetes.NewForConfig(rest.CopyConfig(rc))
	if err != nil {
		return nil, err
	}
	le.Leases = leaseClient.CoordinationV1()
	inner, err := resourcelock.New(resourcelock.LeasesResourceLock, le.Namespace, le.Name,
		leaseClient.CoreV1(), leaseClient.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: le.Identity})
	if err != nil {
		return nil, err
	}
	return fencing.NewLock(inner, fencing.Options{LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline})
}

// servePprof serves the CPU, heap and goroutine profiles on address, as
// kube-controller-manager's --profiling does on its secure port, so that
// make compare can take the same profile of both during a phase.
func servePprof(address string) error {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	fmt.Printf("rscontroller: pprof at http://%s/debug/pprof/\n", l.Addr())
	go func() {
		_ = http.Serve(l, mux)
	}()
	return nil
}

// runSharded runs this replica of a sharded deployment until ctx is done
// (controller.RunSharded), with le's Lease namespace, name (the prefix),
// identity (default: election.DefaultIdentity) and durations.
func runSharded(ctx context.Context, rc *rest.Config, namespace string, workers int, quiet bool, shards int, le election.Flags, opts controller.Options) error {
	if le.Identity == "" {
		id, err := election.DefaultIdentity()
		if err != nil {
			return err
		}
		le.Identity = id
	}
	if quiet {
		ctx = klog.NewContext(ctx, quietLogger())
	}
	opts.Recorder = nil
	so := controller.ShardedOptions{
		Metrics:   opts.Metrics,
		Namespace: namespace,
		Workers:   workers,
		Coordinator: sharding.Options{
			Namespace:     le.Namespace,
			Name:          le.Name,
			Identity:      le.Identity,
			Shards:        shards,
			LeaseDuration: le.LeaseDuration,
			RenewDeadline: le.RenewDeadline,
			RetryPeriod:   le.RetryPeriod,
		},
		Started: func(filtering sharding.Filtering, why string) {
			fmt.Printf("rscontroller: running sharded, %d shards, ReplicaSets filtered %s (%s)\n", shards, filtering, why)
		},
	}
	return controller.RunSharded(ctx, rc, so, opts)
}

// handOverMessages are the log lines of a sharded replica that time its
// hand-overs: the Coordinator's (adapters/sharding), and the ReplicaSet
// example's caches synced and first sync of a shard taken. make compare
// reads them from the replicas' output.
var handOverMessages = map[string]bool{
	"Giving a shard back":     true,
	"Gave a shard back":       true,
	"Lost a shard":            true,
	"Took a shard":            true,
	"Caches synced":           true,
	"First sync of the shard": true,
}

// handOversOnly returns a logger that writes what next writes of the
// messages in keep and drops every other line before it is formatted: -quiet
// keeps the hand-overs' few lines and no line per sync.
func handOversOnly(next logr.Logger, keep map[string]bool) logr.Logger {
	return logr.New(onlySink{next.GetSink(), keep})
}

// onlySink is a logr.LogSink that passes the lines whose message is in keep
// to its sink and drops the others. It keeps the caller's file and line.
type onlySink struct {
	logr.LogSink
	keep map[string]bool
}

func (s onlySink) Info(level int, msg string, kv ...any) {
	if s.keep[msg] {
		s.LogSink.Info(level, msg, kv...)
	}
}

func (s onlySink) Error(err error, msg string, kv ...any) {
	if s.keep[msg] {
		s.LogSink.Error(err, msg, kv...)
	}
}

func (s onlySink) WithValues(kv ...any) logr.LogSink {
	return onlySink{s.LogSink.WithValues(kv...), s.keep}
}

func (s onlySink) WithName(name string) logr.LogSink {
	return onlySink{s.LogSink.WithName(name), s.keep}
}

func (s onlySink) WithCallDepth(depth int) logr.LogSink {
	if d, ok := s.LogSink.(logr.CallDepthLogSink); ok {
		return onlySink{d.WithCallDepth(depth), s.keep}
	}
	return s
}

var _ logr.CallDepthLogSink = onlySink{}

// quietLogger is klog's logger with only the hand-overs' lines.
func quietLogger() logr.Logger {
	return handOversOnly(klog.Background(), handOverMessages)
}
