// Command quickstart runs a controller for WebApp, a custom resource whose
// pods reconcilekit manages (types.go; apply its CRD first).
package main

import (
	"log"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// stamp labels every pod the controller creates; its pod cache holds only those.
var stamp = map[string]string{"example.com/managed-by": "webapp"}

func main() {
	scheme, err := newScheme()
	if err != nil {
		log.Fatal(err)
	}
	prod, err := ctrlruntime.NewProduction(stamp) // what we recommend: docs/choosing.md
	if err != nil {
		log.Fatal(err)
	}
	cacheOpts, err := prod.CacheOptions(cache.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme, Cache: cacheOpts})
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := ctrlruntime.NewConfig[*WebApp](mgr, ctrlruntime.ConfigOptions{Production: prod})
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
