package controller

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Options configure a [Controller]. The zero value is upstream's controller.
type Options struct {
	// Recorder receives the pod events; nil records none.
	Recorder record.EventRecorder
	// BurstReplicas caps the creates, and the deletes, of one sync;
	// <= 0 means 500.
	BurstReplicas int
	// Exact turns on reconcilekit's exact expectations: creations tracked
	// by pod key and the EvidenceFirst expiry policy fed by the pod
	// informer's store resourceVersion. Off: upstream's counters and the
	// 5-minute timeout.
	Exact bool
	// ExpectationsTTL overrides the 5-minute expectations timeout (tests
	// use a short one); <= 0 means the default.
	ExpectationsTTL time.Duration
	// DisableConsistencyGate turns off the consistency gate, as upstream's
	// StaleControllerConsistencyReplicaSet=false: by default a sync waits
	// while the informers' stores are older than the controller's own pod
	// creates, adoptions and status write for that ReplicaSet.
	DisableConsistencyGate bool
	// RateLimiter paces retries of failed syncs; nil means client-go's
	// default controller rate limiter.
	RateLimiter workqueue.TypedRateLimiter[string]
	// Fence, if set, is asked before each of the controller's writes
	// (reconcile.Config.Fence): with leader election, the fenced lock's
	// Fence (package examples/election), so that a replica that may have
	// lost its lease writes nothing. Nil never refuses.
	Fence func() error
	// OnSync, if set, is called after every sync (from the worker
	// goroutine, so it must be quick), with what the sync saw and did.
	OnSync func(Report)
	// StatusInterval writes a converging ReplicaSet's status at most once
	// per interval (reconcile.Config.StatusInterval, docs/rules.md );
	// 0: every change, as upstream.
	StatusInterval time.Duration
	// EventPerBatch records one SuccessfulCreate event per slow-start
	// batch instead of one per pod (clientgo.PodControl.EventPerBatch,
	// ); false: one per pod, as upstream.
	EventPerBatch bool
	// Pods, if set, is the informer factory of the pods (e.g. an
	// owned-only one, or one restricted to a shard's pods); nil: the
	// factory New is given serves the pods too.
	Pods informers.SharedInformerFactory
	// Shard, if set, makes this the controller of one held shard (package
	// adapters/sharding): its Cluster is sharding.WrapCluster's for the
	// shard and Unstamped, and its Fence is the shard's (Fence above is
	// then ignored). Nil: the controller of every ReplicaSet.
	Shard *sharding.Held
	// Unstamped are the pods without the shard label, for Shard; nil: none.
	Unstamped *sharding.Unstamped
	// SyncSlots, if set, bounds the syncs running at once over every
	// Controller given the same channel: a sync takes a slot (a send)
	// before it starts and gives it back when it ends, so the channel's
	// capacity is the budget ([RunSharded] gives every held shard's
	// controller the replica's). Nil: Run's workers alone bound them.
	SyncSlots chan struct{}
	// Metrics, if set, receives the controller's metrics (package
	// adapters/telemetry: syncs, pod creates and deletes, expectations, and
	// upstream's replicaset_controller_stale_sync_skips_total and
	// replicaset_controller_sorting_deletion_age_ratio) and its workqueue's
	// (workqueue_*, name "replicaset"). Nil: no metrics.
	Metrics prometheus.Registerer
}

// Report describes one sync, for progress output and tests.
type Report struct {
	Key      string
	Start    time.Time
	Duration time.Duration
	// Found is false when the ReplicaSet no longer exists.
	Found bool
	// Desired is spec.replicas.
	Desired int32
	// Sync is what the sync saw and did.
	Sync reconcile.SyncResult
	// Pending is the expectations' snapshot after the sync.
	Pending expectations.Snapshot
	// Adopted and Released count the claim step's patches.
	Adopted, Released int
	// Status is the status after the sync (written or unchanged), and
	// Wrote reports that it was written.
	Status appsv1.ReplicaSetStatus
	Wrote  bool
	// RequeueAfter is the availability requeue, if Requeued.
	Requeued     bool
	RequeueAfter time.Duration
	// Err is the sync's error (it is then retried with backoff, unless
	// it is a reconcile.ErrTerminal one).
	Err error
}

// Controller is a ReplicaSet controller. Create it with [New] and run it
// with [Controller.Run] (once).
type Controller struct {
	ctrl   *reconcile.Controller[*appsv1.ReplicaSet]
	queue  workqueue.TypedRateLimitingInterface[string]
	synced []cache.InformerSynced
	onSync func(Report)
	slots  chan struct{} // Options.SyncSlots
	// unregister removes the shard's handler from its ReplicaSet
	// informer when Run returns (nil: nothing to remove).
	unregister func()
	metrics    *telemetry.Collector
	ready      atomic.Bool // the caches have synced and the workers run
}

// New wires a controller to factory's ReplicaSet and pod informers (the
// caller starts factory).
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, opts Options) (*Controller, error) {
	pods := opts.Pods
	if pods == nil {
		pods = factory
	}
	rsInf := factory.Apps().V1().ReplicaSets().Informer()
	podInf := pods.Core().V1().Pods().Informer()
	c := &Controller{
		synced: []cache.InformerSynced{rsInf.HasSynced, podInf.HasSynced},
		onSync: opts.OnSync,
		slots:  opts.SyncSlots,
	}
	limiter := opts.RateLimiter
	if limiter == nil {
		limiter = workqueue.DefaultTypedControllerRateLimiter[string]()
	}
	queueConfig := workqueue.TypedRateLimitingQueueConfig[string]{Name: "replicaset"}
	if opts.Metrics != nil {
		provider, err := clientgo.WorkqueueMetrics(opts.Metrics)
		if err != nil {
			return nil, err
		}
		queueConfig.MetricsProvider = provider
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter, queueConfig)

	// Owners and pods from the informers' indexes, their stores' versions
	// for the consistency gate and Exact, pod control, upstream's status.
	cfg, err := clientgo.NewConfig(client, pods, clientgo.ReplicaSetKind(client, factory),
		clientgo.ConfigOptions{Recorder: opts.Recorder, EventPerBatch: opts.EventPerBatch})
	if err != nil {
		return nil, fmt.Errorf("replicaset controller: %w", err)
	}
	upstream := reconcile.ReplicaSets()
	cfg.Describe, cfg.Status = upstream.Describe, upstream.Status
	cfg.DisableConsistencyGate = opts.DisableConsistencyGate
	cfg.Fence = opts.Fence
	cfg.BurstReplicas = opts.BurstReplicas
	cfg.Expectations.TTL = opts.ExpectationsTTL
	cfg.Expectations.Exact = opts.Exact
	cfg.StatusInterval = opts.StatusInterval
	if opts.Shard != nil {
		cfg.Cluster = sharding.WrapCluster(opts.Shard, cfg.Cluster, opts.Unstamped)
		cfg.Fence = opts.Shard.Fence
	}
	if opts.Metrics != nil {
		cfg, c.metrics = telemetry.Instrument(cfg, telemetry.Options{})
		if err := opts.Metrics.Register(c.metrics); err != nil {
			return nil, fmt.Errorf("replicaset controller: registering the metrics: %w", err)
		}
	}
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		return nil, err
	}
	c.ctrl = ctrl
	if opts.Shard == nil {
		if err := clientgo.Register(c.ctrl, podInf, rsInf, c.queue); err != nil {
			return nil, err
		}
		return c, nil
	}
	if err := c.registerShard(podInf, rsInf, opts.Shard.Shard()); err != nil {
		return nil, err
	}
	return c, nil
}

// registerShard is clientgo.Register for the controller of one held
// shard, whose ReplicaSet informer may be shared by every shard the
// replica holds (RunSharded does so when the API server cannot select
// them by shard): only the shard's ReplicaSets reach its handler, and Run
// removes the handler when it returns, so that a shard given back leaves
// nothing behind on the shared informer. The caches count as synced once
// the handler has been given the informer's ReplicaSets.
func (c *Controller) registerShard(podInf, rsInf cache.SharedIndexInformer, shard sharding.Shard) error {
	if err := clientgo.AddPodControllerIndexer(podInf); err != nil {
		return err
	}
	if err := clientgo.AddControllerUIDIndexer(rsInf); err != nil {
		return err
	}
	if _, err := podInf.AddEventHandler(clientgo.PodHandler(c.ctrl, c.queue)); err != nil {
		return err
	}
	inShard := func(obj any) bool {
		rs, ok := clientgo.Unwrap[*appsv1.ReplicaSet](obj)
		return ok && shard.Contains(rs.UID)
	}
	reg, err := rsInf.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: inShard,
		Handler:    clientgo.OwnerHandler(c.ctrl, c.queue),
	})
	if err != nil {
		return err
	}
	c.synced = []cache.InformerSynced{reg.HasSynced, podInf.HasSynced}
	c.unregister = func() { _ = rsInf.RemoveEventHandler(reg) }
	return nil
}

// Tracker returns the controller's expectations tracker, for
// inspection (e.g. Snapshot) in logs and tests.
func (c *Controller) Tracker() *expectations.Tracker { return c.ctrl.Tracker() }

// Len is how many ReplicaSets the controller remembers anything about
// (see reconcile.Controller.Len); 0 once every ReplicaSet is deleted.
func (c *Controller) Len() int { return c.ctrl.Len() }

// Run waits for the informers' caches, then syncs ReplicaSets with the
// given number of workers until ctx is done. It returns once every worker
// has stopped. It logs "Caches synced" when the caches have synced; it and
// its workers log through klog.FromContext(ctx).
func (c *Controller) Run(ctx context.Context, workers int) error {
	if c.unregister != nil {
		defer c.unregister()
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		c.queue.ShutDown()
		return fmt.Errorf("replicaset controller: caches did not sync: %w", context.Cause(ctx))
	}
	klog.FromContext(ctx).Info("Caches synced")
	c.ready.Store(true)
	defer c.ready.Store(false)
	// The caches have synced: the worker's own wait (Synced) passes at once.
	return clientgo.Worker{Queue: c.queue, Sync: c.sync, Synced: c.synced, Metrics: c.metrics}.Run(ctx, workers)
}

// Ready reports whether Run has seen the informers' caches synced and its
// workers are running: the readiness check (/readyz) of a deployment.
func (c *Controller) Ready() bool { return c.ready.Load() }

// sync runs one sync, in a slot of SyncSlots when set, and reports it to
// OnSync.
func (c *Controller) sync(ctx context.Context, key string) (reconcile.SyncResult, error) {
	if c.slots != nil {
		select {
		case c.slots <- struct{}{}:
			defer func() { <-c.slots }()
		case <-ctx.Done():
			return reconcile.SyncResult{}, fmt.Errorf("replicaset controller: %s not synced: %w", key, context.Cause(ctx))
		}
	}
	start := time.Now()
	res, err := c.ctrl.Sync(ctx, key)
	if c.onSync == nil {
		return res, err
	}
	rep := Report{
		Key:          key,
		Start:        start,
		Duration:     time.Since(start),
		Desired:      res.Owner.Replicas,
		Sync:         res,
		Adopted:      len(res.Adopted),
		Released:     len(res.Released),
		Wrote:        res.StatusWritten,
		Requeued:     res.RequeueAfter > 0,
		RequeueAfter: res.RequeueAfter,
		Err:          err,
	}
	rep.Pending, _ = c.ctrl.Tracker().Snapshot(key)
	if rs, ok := res.Owner.Object.(*appsv1.ReplicaSet); ok {
		rep.Found = true
		rep.Status = rs.Status
	}
	if written, ok := res.Written.(*appsv1.ReplicaSet); ok {
		rep.Status = written.Status
	}
	c.onSync(rep)
	return res, err
}
