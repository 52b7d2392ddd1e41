// Command quickstart runs a controller for WebApp, a custom resource whose
// pods reconcilekit manages (types.go; apply its CRD first).
package main

import (
	"log"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func main() {
	scheme, err := newScheme()
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme})
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := ctrlruntime.NewConfig[*WebApp](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := newController(cfg)
	if err != nil {
		log.Fatal(err)
	}
	_, err = ctrlruntime.Register(mgr, "webapp", c, ctrlruntime.Options{})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mgr.Start(ctrl.SetupSignalHandler()))
}

// newController says what a WebApp asks for and what its status is.
func newController(cfg reconcile.Config[*WebApp]) (*reconcile.Controller[*WebApp], error) {
	cfg.Describe = func(app *WebApp) (reconcile.Owner, error) {
		return reconcile.Owner{Replicas: app.Spec.Replicas, Selector: app.Spec.Selector, Template: &app.Spec.Template}, nil
	}
	cfg.Status = func(app *WebApp, res reconcile.SyncResult) (*WebApp, bool) {
		next := app.DeepCopyObject().(*WebApp)
		next.Status = WebAppStatus{Replicas: res.Counts.Replicas, ReadyReplicas: res.Counts.Ready}
		return next, next.Status != app.Status
	}
	return reconcile.NewController(cfg)
}
