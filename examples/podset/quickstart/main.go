// Command quickstart runs a ReplicaSet controller in a controller-runtime manager
// (turn kube-controller-manager's off: --controllers=*,-replicaset-controller).
package main

import (
	"log"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func main() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := newController(cfg)
	if err != nil {
		log.Fatal(err)
	}
	_, err = ctrlruntime.Register(mgr, "replicaset", c, ctrlruntime.Options{})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mgr.Start(ctrl.SetupSignalHandler()))
}

// newController adds what a ReplicaSet asks for and what its status is.
func newController(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.Status = reconcile.ReplicaSets().Status
	return reconcile.NewController(cfg)
}
