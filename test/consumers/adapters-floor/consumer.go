// Package consumer is a scratch user of reconcilekit's adapters module,
// built at one end of the adapters' supported client-go and
// controller-runtime range (see go.mod). It is never imported.
//
// test/consumers/adapters-floor and test/consumers/adapters-newest carry
// the same consumer.go and consumer_test.go and differ only in go.mod;
// `make compat` checks that, tidies, builds and tests both.
package consumer

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// ClientGo builds a ReplicaSet controller over factory's informers and
// registers its event handlers, which feed queue, as the README's client-go
// quick start does. The caller starts factory and syncs (a
// clientgo.Worker in a program).
func ClientGo(client kubernetes.Interface, factory informers.SharedInformerFactory, queue clientgo.Queue) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	ctrl, err := reconcile.NewController(clientgo.ReplicaSets(client, factory, nil))
	if err != nil {
		return nil, err
	}
	pods := factory.Core().V1().Pods().Informer()
	replicaSets := factory.Apps().V1().ReplicaSets().Informer()
	if err := clientgo.Register(ctrl, pods, replicaSets, queue); err != nil {
		return nil, err
	}
	return ctrl, nil
}

// ControllerRuntime builds a controller-runtime controller of ReplicaSets
// in mgr as the README's controller-runtime quick start does:
// ctrlruntime.NewConfig from the manager, [NewReplicaSets], then
// ctrlruntime.Register. The caller starts mgr.
func ControllerRuntime(mgr manager.Manager) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		return nil, err
	}
	ctrl, err := NewReplicaSets(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := ctrlruntime.Register(mgr, "replicaset", ctrl, ctrlruntime.Options{}); err != nil {
		return nil, err
	}
	return ctrl, nil
}

// NewReplicaSets completes an adapter's Config (ctrlruntime.NewConfig's, or
// ctrlruntimetest's in a test) with upstream's Describe and Status.
func NewReplicaSets(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	upstream := reconcile.ReplicaSets()
	cfg.Describe = upstream.Describe
	cfg.Status = upstream.Status
	return reconcile.NewController(cfg)
}
