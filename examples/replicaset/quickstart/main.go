// Command quickstart runs a ReplicaSet controller built on reconcilekit on
// client-go informers. kube-controller-manager runs one too: try it where
// that one is off (--controllers=*,-replicaset-controller).
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func main() {
	config, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		log.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err = run(ctx, client)
	if err != nil {
		log.Fatal(err)
	}
}

// run syncs ReplicaSets with 5 workers until ctx is cancelled.
func run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := reconcile.NewController(clientgo.ReplicaSets(client, factory, nil))
	if err != nil {
		return err
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	pods := factory.Core().V1().Pods().Informer()
	replicaSets := factory.Apps().V1().ReplicaSets().Informer()
	err = clientgo.Register(c, pods, replicaSets, queue)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	synced := []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced}
	return clientgo.Worker{Queue: queue, Sync: c.Sync, Synced: synced}.Run(ctx, 5)
}
