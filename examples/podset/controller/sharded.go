package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
)

// stampEvery is how often a shard's controller looks for its pods without
// the shard label (created before sharding was turned on) to stamp them.
const stampEvery = time.Second

// ShardedOptions configure [SetupSharded].
type ShardedOptions struct {
	// Cache are the cache options of each held shard's cluster before the
	// shard's pod selector is added (the managed-fields transform, a
	// -namespace field selector, lean pods): the options the manager would
	// have without sharding, less the owned-pods restriction, which
	// Options.OwnedPods adds.
	Cache cache.Options
	// Coordinator places the shards' Leases and times them (Namespace,
	// Name, Identity, Shards, the durations).
	Coordinator sharding.Options
}

// SetupSharded makes mgr one replica of a sharded deployment: it adds to
// mgr a Runnable in which a sharding.Coordinator holds this replica's share
// of the shards, and each held shard runs its own controller
// (a controller-runtime cluster, Config and unmanaged controller of its
// own, fenced by the shard's Lease). The shards a replica holds share its
// client rate limit, its opts.Workers reconciles at once and one event
// broadcaster whose events are fenced by their PodSet's shard
// (sharding.Coordinator.EventSink); the Leases have a client of their own.
// mgr must run without leader election (the shards' Leases
// replace it) and its cache must hold the pods without
// sharding.BucketLabel, which SetupSharded reads (sharding.NewUnstamped):
// build its cache options with opts.OwnedPods.Unsharded().CacheOptions,
// and nothing else reads that cache. Call it once, before mgr.Start. When
// mgr stops, every shard is given back before the Runnable returns.
//
// The PodSets of each shard are filtered on the client
// (sharding.WrapCluster): controller-runtime's cache options cannot carry
// metav1.ListOptions.ShardSelector, so each shard's cache holds every
// PodSet of the namespace; the pods are selected by the API server, by
// their bucket label.
func SetupSharded(mgr ctrl.Manager, so ShardedOptions, opts Options) (*sharding.Coordinator, error) {
	pods, err := mgr.GetCache().GetInformer(context.Background(), &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("podset: the pods without %s: %w", sharding.BucketLabel, err)
	}
	informer, ok := pods.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("podset: the manager's pod informer is a %T, not a client-go SharedIndexInformer (a cache over DefaultNamespaces?)", pods)
	}
	unstamped, err := sharding.NewUnstamped(informer)
	if err != nil {
		return nil, err
	}
	// The Leases' client gets a rate limiter of its own (from the
	// manager's QPS and Burst): no burst of the shards' pod writes delays
	// a renewal past RenewDeadline.
	client, err := kubernetes.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	coord, err := sharding.NewCoordinator(client, so.Coordinator)
	if err != nil {
		return nil, err
	}
	r := &replica{rc: sharedRateLimit(mgr.GetConfig()), scheme: mgr.GetScheme(), unstamped: unstamped, cache: so.Cache}
	workers := opts.Workers
	if workers <= 0 {
		workers = ctrlruntime.DefaultWorkers
	}
	r.slots = make(chan struct{}, workers)
	events, err := kubernetes.NewForConfig(r.rc)
	if err != nil {
		return nil, err
	}
	log := mgr.GetLogger().WithName("podset")
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		ctx = logr.NewContext(ctx, log) // the Coordinator's log and the shards'
		// One event broadcaster for every shard held, each event fenced by
		// the shard of the PodSet it is about.
		broadcaster := record.NewBroadcaster(record.WithContext(ctx))
		defer broadcaster.Shutdown()
		broadcaster.StartRecordingToSink(coord.EventSink(&typedcorev1.EventSinkImpl{Interface: events.CoreV1().Events("")}))
		r.recorder = broadcaster.NewRecorder(r.scheme, corev1.EventSource{Component: "podset-controller"})
		return coord.Run(ctx, func(ctx context.Context, h *sharding.Held) error {
			return r.runShard(ctx, h, opts)
		})
	}))
	return coord, err
}

// replica is what the shards a replica holds share: its rate-limited
// config, its pods without the bucket label, its PodSet cache options,
// its budget of syncs at once and its event recorder.
type replica struct {
	rc        *rest.Config
	scheme    *runtime.Scheme
	unstamped *sharding.Unstamped
	cache     cache.Options
	slots     chan struct{} // capacity: opts.Workers, over every shard held
	recorder  record.EventRecorder
}

// runShard runs the controller of the held shard h until ctx is done and
// returns once it has stopped: a controller-runtime cluster of its own
// over r.rc fenced by h.Fence (fencing.WrapConfig: its client and API
// reader write nothing once the shard's fence closes), whose cache holds
// the PodSets of r.cache and the pods of the shard's buckets, a Config
// from ctrlruntime.NewClusterConfig restricted to the shard by [New]
// (opts.Shard, opts.Unstamped), and an unmanaged controller-runtime
// controller watching that cache, whose opts.Workers reconciles share the
// replica's slots with every other shard's. The pods of r.unstamped that
// belong to the shard are stamped with their bucket every second.
// opts.Fence is replaced by the shard's; its Hooks are kept, but no
// metrics are registered for the shard.
func (r *replica) runShard(ctx context.Context, h *sharding.Held, opts Options) error {
	rc, scheme, unstamped, cacheOpts := r.rc, r.scheme, r.unstamped, r.cache
	shard := h.Shard()
	log := logr.FromContextOrDiscard(ctx).WithValues("shard", shard.String())
	ctx = logr.NewContext(ctx, log)
	fenced, err := fencing.WrapConfig(rc, h.Fence)
	if err != nil {
		return err
	}
	owned, err := opts.OwnedPods.ForShard(shard)
	if err != nil {
		return err
	}
	cacheOpts, err = owned.CacheOptions(cacheOpts)
	if err != nil {
		return err
	}
	cl, err := cluster.New(fenced, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache = cacheOpts
		o.Logger = log
	})
	if err != nil {
		return fmt.Errorf("shard %v: %w", shard, err)
	}

	cfg, err := ctrlruntime.NewClusterConfig[*v1alpha1.PodSet](cl, ctrlruntime.ConfigOptions{
		OwnedPods: owned, EventPerBatch: opts.EventPerBatch, Recorder: r.recorder,
	})
	if err != nil {
		return fmt.Errorf("shard %v: %w", shard, err)
	}
	stamper := cfg.Cluster.PodClient // the shard's fenced pod client, before WrapCluster
	opts.Shard, opts.Unstamped = h, unstamped
	c, err := New(cfg, opts)
	if err != nil {
		return fmt.Errorf("shard %v: %w", shard, err)
	}
	if err := ctrlruntime.AddIndexes[*v1alpha1.PodSet](ctx, cl.GetCache()); err != nil {
		return err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = ctrlruntime.DefaultWorkers
	}
	skip := true // a shard given back and taken again registers its name again
	ctl, err := crcontroller.NewTypedUnmanaged("podset-shard-"+strconv.Itoa(shard.Index), crcontroller.TypedOptions[crreconcile.Request]{
		Reconciler: slotted{slots: r.slots, inner: ctrlruntime.Reconciler[*v1alpha1.PodSet]{
			Controller: c,
			Backoff:    workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request](),
		}},
		MaxConcurrentReconciles: workers,
		SkipNameValidation:      &skip,
		Logger:                  log,
	})
	if err != nil {
		return err
	}
	if err := ctl.Watch(source.Kind(cl.GetCache(), &v1alpha1.PodSet{}, ctrlruntime.OwnerHandler(c))); err != nil {
		return err
	}
	if err := ctl.Watch(source.Kind(cl.GetCache(), &corev1.Pod{}, ctrlruntime.PodHandler(c))); err != nil {
		return err
	}

	// The cluster (its caches), the controller and the stamping run until
	// ctx is done or one of them fails; RunShard returns once all three
	// have returned, so nothing the shard started writes after it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() {
		defer cancel()
		errs[0] = cl.Start(ctx)
	})
	wg.Go(func() {
		defer cancel()
		errs[1] = ctl.Start(ctx)
	})
	wg.Go(func() {
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			n, err := unstamped.Stamp(ctx, h, stamper)
			if err != nil || n > 0 {
				log.Info("Stamped pods with their bucket", "pods", n, "err", err)
			}
		}, stampEvery)
	})
	wg.Wait()
	return errors.Join(errs...)
}

// slotted runs inner's reconciles in a slot of slots: at most cap(slots)
// at once over every reconciler given the same channel.
type slotted struct {
	slots chan struct{}
	inner crreconcile.Reconciler
}

func (s slotted) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return crreconcile.Result{}, fmt.Errorf("podset: %v not reconciled: %w", req, context.Cause(ctx))
	}
	return s.inner.Reconcile(ctx, req)
}

// sharedRateLimit returns rc, or, when rc has a client-side limit (QPS
// above 0, -qps), a copy whose clients share one token bucket of it: every
// shard's fenced config (fencing.WrapConfig copies it) draws from the
// replica's one budget, however many shards it holds.
func sharedRateLimit(rc *rest.Config) *rest.Config {
	if rc.RateLimiter != nil || rc.QPS <= 0 {
		return rc
	}
	c := rest.CopyConfig(rc)
	burst := c.Burst
	if burst <= 0 {
		burst = rest.DefaultBurst
	}
	c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, burst)
	return c
}
