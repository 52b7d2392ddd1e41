// Command rscontroller runs the examples' ReplicaSet controller
// (examples/replicaset/controller) alone, without the demo's scripted
// scenario, until SIGTERM or SIGINT: the e2e tests drive the cluster
// themselves. It is built inside the examples module (go build of this file
// from examples/), so it uses exactly the examples' dependencies.
//
// Every sync with an error, every write and every status change is printed to
// stdout as one line, for the test's log.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
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
	flag.Parse()
	opts := controller.Options{Exact: *exact, ExpectationsTTL: *ttl, DisableConsistencyGate: !*gate}
	if err := run(*kubeconfig, *namespace, *workers, float32(*qps), *burst, *quiet, opts); err != nil {
		fmt.Fprintln(os.Stderr, "rscontroller:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string, workers int, qps float32, burst int, quiet bool, opts controller.Options) error {
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
	ctrl, err := controller.New(client, factory, opts)
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
	return ctrl.Run(ctx, workers)
}
