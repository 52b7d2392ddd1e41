package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/fencing"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// stampEvery is how often a shard's controller looks for its pods without
// the shard label (created before sharding was turned on) to stamp them.
const stampEvery = time.Second

// ShardedOptions configure [RunSharded].
type ShardedOptions struct {
	// Namespace is the namespace whose ReplicaSets the replicas share; "":
	// every namespace.
	Namespace string
	// Workers is the replica's sync budget: at most Workers syncs run at
	// once over all the shards it holds (each shard's controller runs
	// Workers goroutines, which share the budget through
	// Options.SyncSlots), so that a replica's load does not grow with the
	// shards it holds; <= 0: 1.
	Workers int
	// Coordinator places the shards' Leases and times them (Namespace,
	// Name, Identity, Shards, the durations).
	Coordinator sharding.Options
	// Metrics, if set, receives the replica's sharding gauges
	// (telemetry.Sharding: the shards held, the owners' filtering).
	Metrics prometheus.Registerer
	// Started, if set, is called once the filtering of the ReplicaSets is
	// known: ServerSide when the API server selects them by shard, with
	// the reason.
	Started func(filtering sharding.Filtering, reason string)
}

// RunSharded runs the controller as one replica of a sharded deployment
// until ctx is done: a sharding.Coordinator holds this replica's share of
// the shards, and each held shard runs its own controller, with its own
// pod informer (the pods carrying the shard's buckets), expectations and
// client, fenced by the shard's Lease. Each held shard lists and watches
// its own ReplicaSets when the API server selects them by shard; when it
// cannot, the shards share one ReplicaSet informer of the replica's, each
// shard's controller given only its own, rather than each caching every
// ReplicaSet. The replica's budgets are shared
// by the shards it holds: its client rate limit, its so.Workers syncs at
// once, and one event broadcaster whose events are fenced by their
// ReplicaSet's shard (sharding.Coordinator.EventSink). The Leases have a
// client and a rate limit of their own. opts applies to each shard's
// controller, less Fence, Pods, Shard, Unstamped, Recorder, SyncSlots and
// Metrics, which RunSharded sets or leaves out. When ctx is done, every
// shard is given back and RunSharded returns.
func RunSharded(ctx context.Context, rc *rest.Config, so ShardedOptions, opts Options) error {
	log := klog.FromContext(ctx)
	// The Leases' client keeps a rate limiter of its own, so that no burst
	// of pod writes delays a renewal past RenewDeadline (which would close
	// the fence of every shard held).
	leaseClient, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	// One rate limiter for every shard's client: the replica's QPS and
	// burst are its budget however many shards it holds.
	rc = sharedRateLimit(rc)
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	replicaSets := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	filtering, why, err := sharding.DetectFiltering(ctx, client.Discovery().RESTClient(), replicaSets, so.Namespace)
	if err != nil {
		log.Error(err, "Probing the API server's shard selectors failed: the ReplicaSets are filtered client-side")
	}
	log.Info("Sharded ReplicaSets", "filtering", filtering.String(), "reason", why, "shards", so.Coordinator.Shards)
	if so.Started != nil {
		so.Started(filtering, why)
	}

	// The pods without the shard label, shared by every shard held.
	unstampedPods := clientgo.OwnedPods{}.Unsharded().Factory(client, 0,
		informers.WithNamespace(so.Namespace), informers.WithTransform(clientgo.LeanPods))
	unstamped, err := sharding.NewUnstamped(unstampedPods.Core().V1().Pods().Informer())
	if err != nil {
		return err
	}
	unstampedPods.Start(ctx.Done())
	defer unstampedPods.Shutdown()

	coord, err := sharding.NewCoordinator(leaseClient, so.Coordinator)
	if err != nil {
		return err
	}
	if so.Metrics != nil {
		if err := so.Metrics.Register(telemetry.Sharding(coord, filtering)); err != nil {
			return fmt.Errorf("replicaset controller: registering the sharding metrics: %w", err)
		}
	}
	// One event broadcaster for every shard held, each event fenced by
	// the shard of the ReplicaSet it is about.
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(coord.EventSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}))
	opts.Recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "reconcilekit-replicaset"})
	workers := max(so.Workers, 1)
	opts.SyncSlots = make(chan struct{}, workers)

	// Filtered on the client, every shard's ReplicaSet informer would hold
	// and decode every ReplicaSet: the shards held share one instead.
	var sharedOwners informers.SharedInformerFactory
	if filtering != sharding.ServerSide {
		sharedOwners = informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithNamespace(so.Namespace),
			informers.WithTransform(clientgo.TrimManagedFields))
		if err := clientgo.AddControllerUIDIndexer(sharedOwners.Apps().V1().ReplicaSets().Informer()); err != nil {
			return err
		}
		sharedOwners.Start(ctx.Done())
		defer sharedOwners.Shutdown()
	}
	return coord.Run(ctx, func(ctx context.Context, h *sharding.Held) error {
		return runShard(ctx, rc, so.Namespace, workers, opts, h, filtering, sharedOwners, unstamped)
	})
}

// runShard runs the controller of one held shard until ctx is done, with
// workers goroutines sharing opts.SyncSlots and recording events with
// opts.Recorder, the replica's. Its ReplicaSets come from sharedOwners
// when set (the replica's, started), else from an informer of its own
// that asks the API server for the shard's.
func runShard(ctx context.Context, rc *rest.Config, namespace string, workers int, opts Options, h *sharding.Held, filtering sharding.Filtering, sharedOwners informers.SharedInformerFactory, unstamped *sharding.Unstamped) error {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("shard", h.Shard().String()))
	fenced, err := fencing.WrapConfig(rc, h.Fence)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(fenced)
	if err != nil {
		return err
	}
	owners := sharedOwners
	if owners == nil {
		owners = informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithNamespace(namespace),
			informers.WithTransform(clientgo.TrimManagedFields),
			informers.WithTweakListOptions(h.Shard().TweakOwners(filtering)))
		defer owners.Shutdown()
	}
	shardPods, err := clientgo.OwnedPods{}.ForShard(h.Shard())
	if err != nil {
		return err
	}
	pods := shardPods.Factory(client, 0, informers.WithNamespace(namespace), informers.WithTransform(clientgo.TrimManagedFields))

	opts.Fence, opts.Metrics = nil, nil
	opts.Pods, opts.Shard, opts.Unstamped = pods, h, unstamped
	opts.OnSync = logFirstSync(klog.FromContext(ctx), h.Resume(), opts.OnSync)
	ctrl, err := New(client, owners, opts)
	if err != nil {
		return fmt.Errorf("shard %v: %w", h.Shard(), err)
	}
	if sharedOwners == nil {
		owners.Start(ctx.Done())
	}
	pods.Start(ctx.Done())
	defer pods.Shutdown()
	stamper := clientgo.PodControl{Client: client}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			n, err := unstamped.Stamp(ctx, h, stamper)
			if err != nil || n > 0 {
				klog.FromContext(ctx).Info("Stamped pods with their bucket", "pods", n, "err", err)
			}
		}, stampEvery)
	}()
	defer func() { <-done }()
	return ctrl.Run(ctx, workers)
}

// logFirstSync returns an OnSync that logs "First sync of the shard" at
// the end of the shard's first sync that its caches let through (not
// deferred with reconcile.ErrNotSynced by the consistency gate of the
// hand-over), with the shard's resume version (sharding.Held.Resume), how
// long the sync took (its start is the line's time less that), how many
// syncs the gate deferred before it and how long after the first of them
// it started, then calls next (nil: none). With the Coordinator's "Giving
// a shard back" of the shard's previous holder, the line times a
// hand-over to its end, as the new holder's owners see it. Safe for
// concurrent use by the workers.
func logFirstSync(log klog.Logger, resume string, next func(Report)) func(Report) {
	var (
		mu       sync.Mutex
		logged   bool
		deferred int
		first    time.Time // the start of the first sync tried
	)
	return func(r Report) {
		mu.Lock()
		if !logged {
			if first.IsZero() || r.Start.Before(first) {
				first = r.Start
			}
			if errors.Is(r.Err, reconcile.ErrNotSynced) {
				deferred++
			} else {
				logged = true
				log.Info("First sync of the shard", "resume", resume, "key", r.Key, "took", r.Duration,
					"deferred", deferred, "sinceFirstTry", r.Start.Sub(first))
			}
		}
		mu.Unlock()
		if next != nil {
			next(r)
		}
	}
}

// sharedRateLimit returns a copy of rc whose clients share one token
// bucket of rc's QPS and burst (client-go's defaults when 0): every
// config derived from it (fencing.WrapConfig copies it) draws from the same
// budget. A negative QPS (no limit) or an explicit RateLimiter is kept.
func sharedRateLimit(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	if c.RateLimiter != nil || c.QPS < 0 {
		return c
	}
	qps, burst := c.QPS, c.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	return c
}
