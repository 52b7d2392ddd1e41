// Command quickstart runs a ReplicaSet controller built on reconcilekit
// under a controller-runtime manager. kube-controller-manager runs one too:
// try it where that one is off (--controllers=*,-replicaset-controller).
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
	err = mgr.Start(ctrl.SetupSignalHandler())
	if err != nil {
		log.Fatal(err)
	}
}

// newController adds to the adapter's Config what a ReplicaSet asks for
// (Describe) and what its status is (Status): upstream's rules here; your
// own functions for your own kind.
func newController(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	upstream := reconcile.ReplicaSets()
	cfg.Describe = upstream.Describe
	cfg.Status = upstream.Status
	return reconcile.NewController(cfg)
}
