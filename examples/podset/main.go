// Command podset runs the PodSet controller (a controller-runtime Reconciler
// built from reconcilekit) against the cluster of the current kubeconfig
// (or the in-cluster config). Install the CRD first:
//
//	kubectl apply -f config/crd/demo.reconcilekit.dev_podsets.yaml
//	go run ./podset
//	kubectl apply -f config/samples/podset.yaml
//
// Leader election is on by default, with kube-controller-manager's flag
// names and defaults (-leader-elect, -leader-elect-lease-duration=15s,
// -leader-elect-renew-deadline=10s, -leader-elect-retry-period=2s, the Lease
// kube-system/reconcilekit-podset): the manager's LeaderElection options,
// with the Lease lock fenced (adapters/fencing) and the manager's transport
// guarded by the fence (fencing.WrapTransport), so that a replica that may
// have lost the Lease sends no write, and released on SIGTERM. A lost Lease
// ends the process with exit code 1. -namespace restricts it to one
// namespace (a field selector on the manager's caches).
//
// Off by default, the pod cache can be restricted to what the controller
// owns (docs/rules.md, R-13.5 and ): -owned-pods-label=key=value
// stamps that label on every pod the controller creates and caches only
// pods carrying it (an orphan without it is never adopted),
// -drop-finished-pods leaves Succeeded and Failed pods out of the cache,
// and -lean-pods keeps of each cached pod only what the library's rules
// read (ctrlruntime.OwnedPods, ctrlruntime.LeanPods). One
// ctrlruntime.OwnedPods value gives both the cache's pod selectors and the
// labels stamped, so the two cannot disagree. The documented label is
// -owned-pods-label=demo.reconcilekit.dev/owned=true (v1alpha1.OwnedLabel):
// the CRD refuses a PodSet selector that mentions that key, and
// config/admission's ValidatingAdmissionPolicy refuses an update that
// removes it from a PodSet's pod.
//
// -shards K runs the controller as one of several active replicas
// (sharded.go): the PodSets are spread over K shards, each held by one
// running replica through its own Lease (adapters/sharding), with its own
// caches, expectations and fence. Leader election is then off: the
// election's flags name the shards' Leases (namespace, name prefix,
// identity, durations). -shards=0, the default, is the one active replica
// behind the leader-election Lease described above.
//
// -metrics-secure serves -metrics-bind-address over HTTPS to callers that
// kube-apiserver authenticates and authorizes (controller-runtime's
// filters.WithAuthenticationAndAuthorization: a TokenReview and a
// SubjectAccessReview per caller, cached). The fenced transport lets these
// reviews pass, so a standby answers its scrapes too.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/examples/election"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func main() {
	metricsAddr := flag.String("metrics-bind-address", "0", "address of the metrics endpoint, e.g. 127.0.0.1:8080 (\"0\": off)")
	metricsSecure := flag.Bool("metrics-secure", false, "serve /metrics over HTTPS (self-signed unless controller-runtime finds tls.crt and tls.key in its default certificate directory) to callers the API server authenticates (TokenReview) and authorizes (SubjectAccessReview: get on the non-resource URL /metrics); the controller's identity then needs create on tokenreviews and subjectaccessreviews")
	probeAddr := flag.String("health-probe-bind-address", "0", "address of /healthz and /readyz, e.g. 127.0.0.1:8081 (\"0\": off)")
	pprofAddr := flag.String("pprof-bind-address", "", "address of net/http/pprof's /debug/pprof/, e.g. 127.0.0.1:6060 (\"\": off); make compare -profile uses it")
	exact := flag.Bool("exact", false, "exact expectations: pods named and expected by key, pending rounds resolved from the pod informer's store resourceVersion (EvidenceFirst) instead of the 5-minute timeout")
	qps := flag.Float64("qps", 0, "client-side QPS limit to the API server (0: controller-runtime's default, no client-side limit)")
	burst := flag.Int("burst", 0, "client-side burst, with -qps")
	workers := flag.Int("workers", ctrlruntime.DefaultWorkers, "concurrent syncs")
	namespace := flag.String("namespace", "", "watch and reconcile PodSets and pods in this namespace only (\"\": all namespaces)")
	ownedLabel := flag.String("owned-pods-label", "", "key=value[,key=value]: stamp these labels on every pod created and cache only the pods carrying them; an orphan without them is never seen nor adopted (\"\": every pod, as upstream). The CRD and config/admission guard "+v1alpha1.OwnedLabel+"=true")
	dropFinished := flag.Bool("drop-finished-pods", false, "leave Succeeded and Failed pods out of the pod cache (a field selector on status.phase); no sync reads them")
	leanPods := flag.Bool("lean-pods", false, "cache of each pod only what the library's rules read (ctrlruntime.LeanPods)")
	statusInterval := flag.Duration("status-interval", 0, "write a converging PodSet's status at most once per interval (the first write, a new generation, a failure and the converged status at once; 0: every change, as upstream)")
	eventPerBatch := flag.Bool("event-per-batch", false, "record one SuccessfulCreate event per slow-start batch instead of one per pod")
	var le election.Flags
	le.AddFlags(flag.CommandLine, "reconcilekit-podset")
	shards := flag.Int("shards", 0, "spread the PodSets over this many shards, each held by one of the running replicas through its own Lease (-leader-elect-resource-namespace, -leader-elect-resource-name as the Leases' prefix, the election's durations and identity); 0: one replica works, behind the leader-election Lease (at most 256)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("podset")
	switch {
	case *shards < 0 || *shards > 256:
		log.Error(errors.New("-shards must lie in [0, 256]"), "flags")
		os.Exit(2)
	case *shards > 0 && le.Explicit() && le.Enabled:
		log.Error(errors.New("-shards replaces -leader-elect: each shard has its own Lease"), "flags")
		os.Exit(2)
	}
	// On by default: the PodSet controller always runs against a real
	// cluster. With -shards the shards' Leases take its place.
	if err := le.Resolve(*shards == 0); err != nil {
		log.Error(err, "flags")
		os.Exit(2)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	// As kube-controller-manager: the caches drop managedFields, which no
	// controller reads. Leave the rest.Config's ContentType empty:
	// controller-runtime then talks protobuf for the built-in types (pods)
	// and JSON for PodSets, which, as every custom resource, have no
	// protobuf encoding. SetupWithManager's ctrlruntime.Register adds the
	// field indexes the lookups read, and its ctrlruntime.NewConfig the
	// pod events' recorder (core/v1 Events from podset-controller).
	rc := ctrl.GetConfigOrDie()
	if *qps > 0 {
		rc.QPS = float32(*qps)
		rc.Burst = *burst
	}
	metricsOpts := metricsserver.Options{BindAddress: *metricsAddr}
	if *metricsSecure {
		// controller-runtime's authenticated metrics, as kubebuilder
		// scaffolds them. The reviews go out through rc, fenced below:
		// the fence lets them pass, so a standby serves its scrapes too.
		metricsOpts.SecureServing = true
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
		// HTTP/1.1 only: no HTTP/2 stream handling to expose (rapid reset).
		metricsOpts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	mopts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: *probeAddr,
		PprofBindAddress:       *pprofAddr,
		Cache:                  cache.Options{DefaultTransform: ctrlruntime.TrimManagedFields},
	}
	if *namespace != "" {
		// The caches list and watch this namespace only (a field selector:
		// still one informer per type, whose store version the consistency
		// gate reads; DefaultNamespaces would wrap one per namespace), so
		// the controller never sees, nor reconciles, a PodSet elsewhere.
		mopts.Cache.DefaultFieldSelector = fields.OneTermEqualSelector("metadata.namespace", *namespace)
	}
	podLabels, err := labels.ConvertSelectorToLabelsMap(*ownedLabel)
	if err != nil {
		log.Error(err, "-owned-pods-label")
		os.Exit(2)
	}
	// One value for the pod cache's selectors and the labels stamped on
	// every pod created (the controller's ConfigOptions below), so that the
	// controller always sees the pods it creates. Its zero value, without
	// -owned-pods-label and -drop-finished-pods, restricts nothing.
	owned, err := ctrlruntime.NewOwnedPods(podLabels, *dropFinished)
	if err != nil {
		log.Error(err, "-owned-pods-label")
		os.Exit(2)
	}
	if *leanPods {
		mopts.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: ctrlruntime.LeanPods}}
	}
	// With -shards, each shard's cluster starts from these options
	// (sharded.go) and the manager caches only the pods no shard selects:
	// those without the bucket label, made before sharding.
	shardCache, cached := mopts.Cache, owned
	if *shards > 0 {
		cached = owned.Unsharded()
	}
	// The pods' entry keeps its Transform, and -namespace's field
	// selector is ANDed into the pods' own.
	mopts.Cache, err = cached.CacheOptions(mopts.Cache)
	if err != nil {
		log.Error(err, "-owned-pods-label")
		os.Exit(2)
	}
	var fence func() error
	if le.Enabled {
		// Before the manager is built: its clients get the fenced transport.
		lock, err := le.Fence(rc)
		if err != nil {
			log.Error(err, "leader election")
			os.Exit(1)
		}
		mopts.LeaderElection = true
		mopts.LeaderElectionID = le.Name
		mopts.LeaderElectionNamespace = le.Namespace
		mopts.LeaderElectionResourceLockInterface = lock
		mopts.LeaderElectionReleaseOnCancel = true
		mopts.LeaseDuration = &le.LeaseDuration
		mopts.RenewDeadline = &le.RenewDeadline
		mopts.RetryPeriod = &le.RetryPeriod
		fence = lock.Fence
	}
	mgr, err := ctrl.NewManager(rc, mopts)
	if err != nil {
		log.Error(err, "creating the manager")
		os.Exit(1)
	}
	ropts := controller.Options{
		Workers: *workers,
		// SetupWithManager gives Exact the pod cache's version.
		Expectations: reconcile.ExpectationOptions{Exact: *exact},
		Fence:        fence,
		// The labels stamped: the ones the pod cache selects.
		OwnedPods:      owned,
		StatusInterval: *statusInterval,
		EventPerBatch:  *eventPerBatch,
	}
	if *shards > 0 {
		err = setupSharded(mgr, le, *shards, shardCache, ropts)
	} else {
		_, err = controller.SetupWithManager(mgr, ropts)
	}
	if err != nil {
		log.Error(err, "setting up the controller")
		os.Exit(1)
	}
	if err := addProbes(mgr); err != nil {
		log.Error(err, "adding the health probes")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if le.Enabled {
		lease := le.Namespace + "/" + le.Name
		log.Info("leader election: waiting for the lease", "lease", lease, "identity", le.Identity)
		go func() {
			select {
			case <-mgr.Elected():
				log.Info("leader election: became leader", "lease", lease, "identity", le.Identity)
			case <-ctx.Done():
			}
		}()
	}
	if err := mgr.Start(ctx); err != nil {
		// "leader election lost" when the Lease was lost while leading.
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}
