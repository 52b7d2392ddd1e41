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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// ControllerRuntime builds a controller-runtime reconciler of ReplicaSets
// as the README's controller-runtime quick start does for its own kind:
// ctrlruntime.NewConfig over c (reads and writes) and informers
// (mgr.GetCache() in a manager; nil runs without the consistency gate),
// with upstream's Describe and Status.
func ControllerRuntime(c client.Client, informers cache.Informers, scheme *runtime.Scheme) (ctrlruntime.Reconciler[*appsv1.ReplicaSet], error) {
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](c, c, informers, scheme, nil)
	if err != nil {
		return ctrlruntime.Reconciler[*appsv1.ReplicaSet]{}, err
	}
	upstream := reconcile.ReplicaSets()
	cfg.Describe = upstream.Describe
	cfg.Status = upstream.Status
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		return ctrlruntime.Reconciler[*appsv1.ReplicaSet]{}, err
	}
	return ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: ctrl}, nil
}
