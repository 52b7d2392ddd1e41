package fencing_test

import (
	"context"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// A controller behind client-go's leader election, fenced twice: the
// Controller asks lock.Fence before each write, and the transport of the
// controller's clients refuses what is still queued when the lease is lost.
// Not run here (it needs an API server); the examples module's replicaset
// command runs it.
func Example_clientGo() {
	var cfg reconcile.Config[*appsv1.ReplicaSet] // clientgo.ReplicaSets(…), built after the transport is wrapped
	run := func(ctx context.Context) {}          // starts the informers and the workers
	_ = leadFenced(context.Background(), &rest.Config{Host: "https://127.0.0.1:6443"}, &cfg, "replica-a", run)
}

func leadFenced(ctx context.Context, rc *rest.Config, cfg *reconcile.Config[*appsv1.ReplicaSet], id string, run func(context.Context)) error {
	client, err := kubernetes.NewForConfig(rest.CopyConfig(rc)) // the elector's client
	if err != nil {
		return err
	}
	inner, err := resourcelock.New(resourcelock.LeasesResourceLock, "kube-system", "my-controller",
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second})
	if err != nil {
		return err
	}
	rc.Wrap(fencing.WrapTransport(lock.Fence)) // before building the controller's clientset
	cfg.Fence = lock.Fence
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks:       leaderelection.LeaderCallbacks{OnStartedLeading: run, OnStoppedLeading: func() { os.Exit(1) }},
	})
	return nil
}
