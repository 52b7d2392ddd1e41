// Command webapp runs the WebApp operator (package controller: its own
// Reconcile with a finalizer, a Service and a PodDisruptionBudget, and
// reconcilekit's pod management as one step of it) against the cluster of
// the current kubeconfig (or the in-cluster config), as the one leader of
// the Lease kube-system/reconcilekit-webapp. Install the CRD first:
//
//	kubectl apply -f config/crd/demo.reconcilekit.dev_webapps.yaml
//	go run ./webapp
//	kubectl apply -f config/samples/webapp.yaml
//
// Its identity needs config/rbac/role.yaml's rules, and leader election's
// (as the PodSet controller's config/rbac/leader_election_role.yaml, for
// this Lease). examples/podset shows the rest a deployment wants (fencing,
// metrics, probes, owned-only caches): the same options apply here.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/reconcilekit/reconcilekit/examples/webapp/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/webapp/controller"
)

func main() {
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse() // -kubeconfig (controller-runtime's) and zap's flags
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	log := ctrl.Log.WithName("webapp")
	scheme := runtime.NewScheme()
	err := clientgoscheme.AddToScheme(scheme)
	if err == nil {
		err = v1alpha1.AddToScheme(scheme)
	}
	if err != nil {
		log.Error(err, "building the scheme")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  scheme,
		LeaderElection:          true,
		LeaderElectionID:        "reconcilekit-webapp",
		LeaderElectionNamespace: "kube-system",
	})
	if err != nil {
		log.Error(err, "building the manager")
		os.Exit(1)
	}
	_, err = controller.SetupWithManager(mgr)
	if err != nil {
		log.Error(err, "setting up the WebApp operator")
		os.Exit(1)
	}
	err = mgr.Start(ctrl.SetupSignalHandler())
	if err != nil {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}
