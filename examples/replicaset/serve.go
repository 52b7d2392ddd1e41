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

	ctrl, factory, err := newController(cfg, client, recorder, srv, nil)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	where := cfg.namespace
	if where == "" {
		where = "every namespace"
	}
	fmt.Fprintf(out, "replicaset controller running (%s, %d workers)\n", where, cfg.workers)
	return ctrl.Run(ctx, cfg.workers)
}

// newController builds the example's controller on an informer factory of
// cfg.namespace whose caches drop managedFields, which no controller reads
// (as kube-controller-manager's); controller.New's clientgo.Register indexes
// the pods by controller reference and the ReplicaSets by controller UID.
// /readyz follows the controller's caches. The caller starts the factory.
func newController(cfg config, client kubernetes.Interface, recorder record.EventRecorder, srv *serving, onSync func(controller.Report)) (*controller.Controller, informers.SharedInformerFactory, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(cfg.namespace),
		informers.WithTransform(clientgo.TrimManagedFields))
	ctrl, err := controller.New(client, factory, controller.Options{
		Recorder:               recorder,
		Exact:                  cfg.exact,
		DisableConsistencyGate: !cfg.gate,
		Fence:                  cfg.fence,
		StatusInterval:         cfg.statusInterval,
		EventPerBatch:          cfg.eventPerBatch,
		OnSync:                 onSync,
		Metrics:                srv.registry,
	})
	if err != nil {
		return nil, nil, err
	}
	srv.readyWhen(ctrl.Ready)
	return ctrl, factory, nil
}
