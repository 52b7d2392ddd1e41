package clientgo_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// A complete ReplicaSet controller over client-go, run against the fake
// cluster.
func ExampleReplicaSets() {
	cluster := fakecluster.New(1, fakecluster.Faults{})
	client := cluster.Clientset
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl, err := reconcile.NewController(clientgo.ReplicaSets(client, factory, nil))
	if err != nil {
		panic(err)
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	pods, replicaSets := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	if err := clientgo.Register(ctrl, pods, replicaSets, queue); err != nil {
		panic(err)
	}
	factory.Start(ctx.Done())
	// The worker syncs nothing before both caches have synced.
	worker := clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced}}
	go worker.Run(ctx, 2) // its only error: ctx ended before the caches synced

	if _, err := client.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("web", 3), metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	for range 2000 { // bounded wait for the pods
		pods, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if len(pods.Items) == 3 {
			fmt.Println("pods:", len(pods.Items))
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Output: pods: 3
}

// Unwrap handles informer delete notifications, tombstones included.
func ExampleUnwrap() {
	obj := any("not a pod")
	_, ok := clientgo.Unwrap[*metav1.PartialObjectMetadata](obj)
	fmt.Println(ok)
	// Output: false
}

// The consistency gate and the unsynced-cache guard over client-go
// informers: the stores' versions go into Config.Cluster.CacheVersions and
// their sync state into Config.Cluster.CachesSynced (ReplicaSets does this
// itself). A sync then waits while a store is older than the controller's
// own writes, and does nothing before both informers have synced.
func ExampleCacheVersions() {
	client := fakecluster.New(1, fakecluster.Faults{}).Clientset
	factory := informers.NewSharedInformerFactory(client, 0)
	pods, owners := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()

	cfg := reconcile.ReplicaSets()
	cfg.Cluster.CacheVersions = clientgo.CacheVersions(pods, owners)
	cfg.Cluster.CachesSynced = clientgo.CachesSynced(pods, owners)
	fmt.Printf("pods cache at %q, synced %t before the informers start\n", cfg.Cluster.CacheVersions.Pods(), cfg.Cluster.CachesSynced())
	// Output: pods cache at "", synced false before the informers start
}

// A ReplicaSet controller whose pod cache holds only the pods it created,
// still running, each reduced to what the library reads (OwnedPods,
// LeanPods): the ReplicaSets come from a factory of their own, the pods
// from the OwnedPods' factory, and NewConfig gives the PodControl the
// same OwnedPods' labels, so that the cache sees every pod it creates.
func ExampleOwnedPods() {
	client := fakecluster.New(1, fakecluster.Faults{}).Clientset
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	owned, err := clientgo.NewOwnedPods(map[string]string{"example.com/managed-by": "rs-controller"}, true)
	if err != nil {
		panic(err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	podFactory := owned.Factory(client, 0, informers.WithTransform(clientgo.LeanPods))
	cfg, err := clientgo.NewConfig(client, podFactory, clientgo.ReplicaSetKind(client, factory), clientgo.ConfigOptions{})
	if err != nil {
		panic(err)
	}
	upstream := reconcile.ReplicaSets()
	cfg.Describe, cfg.Status = upstream.Describe, upstream.Status
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}
	pods, replicaSets := podFactory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	if err := clientgo.Register(ctrl, pods, replicaSets, queue); err != nil {
		panic(err)
	}
	factory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	worker := clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced}}
	go worker.Run(ctx, 2)

	if _, err := client.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("web", 2), metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	for range 2000 { // bounded wait for the pods
		list, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "example.com/managed-by=rs-controller"})
		if len(list.Items) == 2 {
			fmt.Println("stamped pods:", len(list.Items))
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Output: stamped pods: 2
}

// A controller for a custom resource on client-go with no hand wiring:
// NewConfig builds the whole Cluster from the owner kind's informer and
// typed client, and the caller says what a WebApp asks for and what its
// status is. Here apps stands in for the generated code of a real custom
// resource: apps.Informer() for factory.Example().V1().WebApps().Informer(),
// apps.Client for func(ns string) clientgo.OwnerClient[*v1.WebApp] {
// return clientset.ExampleV1().WebApps(ns) }.
func ExampleNewConfig() {
	client := fakecluster.New(1, fakecluster.Faults{}).Clientset
	apps := newWebApps()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	pods := informers.NewSharedInformerFactory(client, 0) // prod.Factory(client, 0) for the Production profile
	owners := apps.Informer()
	cfg, err := clientgo.NewConfig(client, pods, clientgo.Kind[*WebApp]{
		GroupVersionKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "WebApp"},
		Resource:         schema.GroupResource{Group: "example.com", Resource: "webapps"},
		Informer:         owners,
		Client:           apps.Client,
	}, clientgo.ConfigOptions{})
	if err != nil {
		panic(err)
	}
	cfg.Describe = func(app *WebApp) (reconcile.Owner, error) {
		return reconcile.Owner{Replicas: app.Spec.Replicas, Selector: app.Spec.Selector, Template: &app.Spec.Template}, nil
	}
	cfg.Status = func(app *WebApp, res reconcile.SyncResult) (*WebApp, bool) {
		next := app.DeepCopyObject().(*WebApp)
		next.Status = WebAppStatus{Replicas: res.Counts.Replicas, ReadyReplicas: res.Counts.Ready}
		return next, next.Status != app.Status
	}
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	podInformer := pods.Core().V1().Pods().Informer()
	if err := clientgo.Register(ctrl, podInformer, owners, queue); err != nil {
		panic(err)
	}
	pods.Start(ctx.Done())
	wg.Go(func() { owners.Run(ctx.Done()) })
	worker := clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: []cache.InformerSynced{podInformer.HasSynced, owners.HasSynced}}
	wg.Go(func() { _ = worker.Run(ctx, 2) })

	apps.Create(webApp("web", 3))
	for range 2000 { // bounded wait for the status
		if app, _ := apps.Get("default", "web"); app.Status.Replicas == 3 {
			fmt.Println("replicas:", app.Status.Replicas)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Output: replicas: 3
}
