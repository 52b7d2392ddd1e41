package main

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
)

// serve runs the controller alone (-scenario=false) until ctx is done: the
// shape of a deployment, in which something else changes the ReplicaSets.
func serve(ctx context.Context, cfg config, client kubernetes.Interface, srv *serving, out io.Writer) error {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "reconcilekit-replicaset"})

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(cfg.namespace),
		informers.WithTransform(clientgo.TrimManagedFields))
	ctrl, err := controller.New(client, factory, controller.Options{
		Recorder:               recorder,
		Exact:                  cfg.exact,
		DisableConsistencyGate: !cfg.gate,
		Fence:                  cfg.fence,
		Metrics:                srv.registry,
	})
	if err != nil {
		return err
	}
	srv.readyWhen(ctrl.Ready)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	where := cfg.namespace
	if where == "" {
		where = "every namespace"
	}
	fmt.Fprintf(out, "replicaset controller running (%s, %d workers)\n", where, cfg.workers)
	return ctrl.Run(ctx, cfg.workers)
}
