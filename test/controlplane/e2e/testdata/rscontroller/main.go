// Command rscontroller runs the examples' ReplicaSet controller
// (examples/replicaset/controller) alone, without the demo's scripted
// scenario, until SIGTERM or SIGINT: the e2e tests drive the cluster
// themselves. It is built inside the examples module (go build of this file
// from examples/), so it uses exactly the examples' dependencies.
//
// Every sync with an error, every write and every status change is printed to
// stdout as one line, for the test's log.
//
// With -leader-elect it is one replica of several behind a Lease, with
// kube-controller-manager's flags and defaults (-leader-elect-lease-duration
// 15s, -leader-elect-renew-deadline 10s, -leader-elect-retry-period 2s,
// -leader-elect-resource-namespace kube-system, -leader-elect-resource-name
// reconcilekit-replicaset, -leader-elect-identity: the host name and a
// random suffix). Its informers start and sync before it tries for the
// lease, so that a replica that takes over syncs at once; the controller
// runs only while it leads. It releases the lease on SIGTERM or SIGINT and
// exits with status 1 when it loses the lease. With -fence (the default) a
// replica whose last successful renewal started a renew deadline ago sends
// no write but the lease's (adapters/fencing: the fence closes before
// another replica can take the lease). -leader-elect is off by
// default here (unlike the example's, which is on with -kubeconfig): the
// e2e tests run many of these on one cluster, each for its own namespace.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
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
	quiet := flag.Bool("quiet", false, "print no line per sync (make compare measures the controller's CPU)")
	var le election
	flag.BoolVar(&le.on, "leader-elect", false, "run as one replica of several: sync only while holding the Lease")
	flag.DurationVar(&le.lease, "leader-elect-lease-duration", 15*time.Second, "how long a lease lasts without renewal before another replica may take it")
	flag.DurationVar(&le.renew, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up leading")
	flag.DurationVar(&le.retry, "leader-elect-retry-period", 2*time.Second, "how often a replica tries to take or renew the lease")
	flag.StringVar(&le.namespace, "leader-elect-resource-namespace", "kube-system", "namespace of the Lease")
	flag.StringVar(&le.name, "leader-elect-resource-name", "reconcilekit-replicaset", "name of the Lease")
	flag.StringVar(&le.identity, "leader-elect-identity", "", "this replica's holderIdentity (default: the host name and a random suffix)")
	flag.BoolVar(&le.fence, "fence", true, "with -leader-elect: refuse every write (but the lease's) once the last successful renewal started a renew deadline ago (adapters/fencing, before the wire)")
	flag.Parse()
	opts := controller.Options{Exact: *exact, ExpectationsTTL: *ttl, DisableConsistencyGate: !*gate}
	if err := run(*kubeconfig, *namespace, *workers, float32(*qps), *burst, *quiet, le, opts); err != nil {
		fmt.Fprintln(os.Stderr, "rscontroller:", err)
		os.Exit(1)
	}
}

// election is the leader election the flags ask for.
type election struct {
	on, fence                 bool
	lease, renew, retry       time.Duration
	namespace, name, identity string
}

func run(kubeconfig, namespace string, workers int, qps float32, burst int, quiet bool, le election, opts controller.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = qps, burst
	// As kube-controller-manager: protobuf for the built-in types, and
	// caches without managedFields (below).
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	var lock resourcelock.Interface
	if le.on {
		// The lease has a client of its own, which the fence never refuses.
		leaseClient, err := kubernetes.NewForConfig(rest.CopyConfig(rc))
		if err != nil {
			return err
		}
		if lock, err = newLock(leaseClient, &le); err != nil {
			return err
		}
		if f, ok := lock.(*fencing.Lock); ok {
			rc.Wrap(fencing.WrapTransport(f.Fence))
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
	ctrl, err := controller.New(client, factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), opts)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	fmt.Println("rscontroller: running")
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the %v cache did not sync", typ)
		}
	}
	fmt.Println("rscontroller: caches synced")
	if !le.on {
		return ctrl.Run(ctx, workers)
	}
	err = lead(ctx, lock, le, func(ctx context.Context) error { return ctrl.Run(ctx, workers) })
	stop() // a lost lease leaves ctx running: the informers stop with it, before their factory's Shutdown
	return err
}

// newLock is the Lease lock of le (its identity set when empty), wrapped by
// a fencing.Lock with -fence.
func newLock(client kubernetes.Interface, le *election) (resourcelock.Interface, error) {
	if le.identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		le.identity = host + "_" + rand.Text()[:8]
	}
	lease := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.namespace, Name: le.name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: le.identity},
	}
	if !le.fence {
		return lease, nil
	}
	return fencing.NewLock(lease, fencing.Options{LeaseDuration: le.lease, RenewDeadline: le.renew})
}

// lead runs work while this replica holds the lease, until ctx ends (the
// lease is then released) or the lease is lost (an error).
func lead(ctx context.Context, lock resourcelock.Interface, le election, work func(context.Context) error) error {
	var workErr error
	var working sync.WaitGroup
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.lease,
		RenewDeadline:   le.renew,
		RetryPeriod:     le.retry,
		ReleaseOnCancel: true,
		Name:            le.identity,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				fmt.Printf("rscontroller: %s leads (lease %s/%s)\n", le.identity, le.namespace, le.name)
				working.Go(func() { workErr = work(ctx) })
			},
			OnStoppedLeading: func() {
				fmt.Printf("rscontroller: %s stopped leading\n", le.identity)
			},
		},
	})
	if err != nil {
		return err
	}
	fmt.Printf("rscontroller: %s waits for the lease %s/%s\n", le.identity, le.namespace, le.name)
	elector.Run(ctx) // returns once ctx ends or the lease is lost, the lease released on the way
	working.Wait()
	if ctx.Err() == nil {
		return fmt.Errorf("%s lost the lease %s/%s", le.identity, le.namespace, le.name)
	}
	return workErr
}
