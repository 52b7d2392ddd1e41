// Package controller is the PodSet controller for controller-runtime, built
// on [reconcile.Controller] and package adapters/ctrlruntime: expectations,
// adoption and release, slow-start creates, deletes ranked with the pods of
// related PodSets (those sharing a controller), and a status of counts plus
// a ReplicaFailure metav1.Condition ([status.SetReplicaFailure]).
package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// Options configure [SetupWithManager] and [New]; the zero value is
// upstream's behaviour.
type Options struct {
	Expectations   reconcile.ExpectationOptions // e.g. TTL, Exact
	Hooks          reconcile.Hooks              // every notification: the manage step's, expectation rounds, gate deferrals
	Fence          func() error                 // leader election's fence (adapters/fencing); nil: never fenced
	Workers        int                          // concurrent syncs; <= 0: ctrlruntime.DefaultWorkers
	OwnedPods      ctrlruntime.OwnedPods        // its labels stamped on every pod created; the manager's cache options from the same value (OwnedPods.CacheOptions); zero: none
	StatusInterval time.Duration                // a converging PodSet's status written at most this often (reconcile.Config.StatusInterval); 0: every change
	EventPerBatch  bool                         // one SuccessfulCreate event per slow-start batch instead of per pod
	// Shard, if set, makes this the controller of one held shard (package
	// adapters/sharding, [SetupSharded]): its Cluster is
	// sharding.WrapCluster's for the shard and Unstamped, and its Fence the
	// shard's (Fence above is then ignored). Nil: the controller of every
	// PodSet.
	Shard *sharding.Held
	// Unstamped are the pods without the shard label, for Shard; nil: none.
	Unstamped *sharding.Unstamped
}

// Controller reconciles PodSets; it is a [reconcile.Controller].
type Controller = reconcile.Controller[*v1alpha1.PodSet]

// The PodSet controller's permissions, from which controller-gen writes
// config/rbac/role.yaml (make rbac; TestRBACMarkersMatchRole checks that
// the file is what these say). Each rule's use is in examples/README.md,
// "Deploying". The Lease rules are apart: leader election's in
// config/rbac/leader_election_role.yaml, sharding's (-shards) in
// config/rbac/sharding_role.yaml.
//
// +kubebuilder:rbac:groups=demo.reconcilekit.dev,resources=podsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=demo.reconcilekit.dev,resources=podsets/status,verbs=update
// +kubebuilder:rbac:groups=demo.reconcilekit.dev,resources=podsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager builds the Controller from mgr and registers it there.
// With mgr's cache, a sync waits while the cache is older than the
// controller's own writes for that PodSet (the consistency gate, as
// upstream's ReplicaSet controller since v1.36). The controller's metrics
// (package adapters/telemetry, controller label "podset") go to
// controller-runtime's registry, which the manager's metrics server
// serves: syncs, pod creates and deletes, and, through the hooks of
// opts.Hooks, expectation rounds, gate
// deferrals and the deletion age ratio. Call it once per process.
func SetupWithManager(mgr ctrl.Manager, opts Options) (*Controller, error) {
	collector := telemetry.New(v1alpha1.GroupVersion.WithKind("PodSet"), v1alpha1.GroupVersion.WithResource("podsets").GroupResource(), telemetry.Options{})
	opts.Hooks = collector.Hooks(opts.Hooks)
	cfg, err := ctrlruntime.NewConfig[*v1alpha1.PodSet](mgr, ctrlruntime.ConfigOptions{OwnedPods: opts.OwnedPods, EventPerBatch: opts.EventPerBatch})
	if err != nil {
		return nil, err
	}
	c, err := New(cfg, opts)
	if err != nil {
		return nil, err
	}
	_, err = ctrlruntime.Register(mgr, "podset", c, ctrlruntime.Options{Workers: opts.Workers, Metrics: collector})
	return c, err
}

// New builds the Controller from cfg, whose Kind and Cluster the adapter
// filled (ctrlruntime.NewConfig from a manager; ctrlruntimetest.New in
// tests): what a PodSet asks for (Describe), its status (Status, a pure
// function; the library writes it) and opts' tuning. opts.OwnedPods and
// opts.EventPerBatch are the pod client's, set by the adapter.
func New(cfg reconcile.Config[*v1alpha1.PodSet], opts Options) (*Controller, error) {
	cfg.Expectations = opts.Expectations
	cfg.Hooks = opts.Hooks
	cfg.Fence = opts.Fence
	if opts.Shard != nil {
		cfg.Cluster = sharding.WrapCluster(opts.Shard, cfg.Cluster, opts.Unstamped)
		cfg.Fence = opts.Shard.Fence
	}
	cfg.StatusInterval = opts.StatusInterval
	cfg.Describe = describe
	cfg.Status = computeStatus
	return reconcile.NewController(cfg)
}

// describe says what a PodSet asks for.
func describe(ps *v1alpha1.PodSet) (reconcile.Owner, error) {
	replicas := int32(1)
	if ps.Spec.Replicas != nil {
		replicas = *ps.Spec.Replicas
	}
	owner := reconcile.Owner{
		Replicas:        replicas,
		Template:        &ps.Spec.Template,
		Selector:        ps.Spec.Selector,
		MinReadySeconds: ps.Spec.MinReadySeconds,
	}
	return owner, nil
}

// computeStatus is a PodSet's status after a sync: counts, the observed
// generation and the ReplicaFailure condition; false when it is already
// right.
func computeStatus(ps *v1alpha1.PodSet, res reconcile.SyncResult) (*v1alpha1.PodSet, bool) {
	next := ps.DeepCopy()
	next.Status.Replicas = res.Counts.Replicas
	next.Status.ReadyReplicas = res.Counts.Ready
	next.Status.AvailableReplicas = res.Counts.Available
	next.Status.TerminatingReplicas = res.Counts.Terminating
	next.Status.ObservedGeneration = ps.Generation
	conditions, _ := status.SetReplicaFailure(ps.Status.Conditions, res.ManageErr, res.Diff, ps.Generation, res.Now)
	next.Status.Conditions = conditions
	changed := !equality.Semantic.DeepEqual(next.Status, ps.Status)
	return next, changed
}
