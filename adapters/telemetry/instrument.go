package telemetry

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Instrument returns a copy of cfg whose hooks also feed a new
// [Collector], and that Collector. The hooks cfg already has (Config.Hooks,
// where a Controller's every notification is) keep running: each is called
// first, then the Collector's, on the same goroutine. The Collector's
// metric names and labels follow cfg.Kind (see [Options]); build the
// Controller from the returned Config, then register the Collector and
// hand it the sync results ([Collector.ObserveSync]; clientgo.Worker.Metrics
// and ctrlruntime.Options.Metrics do). cfg itself is not modified.
//
// The Collector also exports [FastPathName]: one gauge per fast path cfg's
// Cluster has ([FastPaths]), read at each scrape. [New] has no Config and
// does not.
//
// From the hooks ([Collector.Hooks]) come the expectation rounds'
// resolutions, the gate's deferrals by resource, the deletion age ratio
// and the stopped creations; the rest comes from ObserveSync.
func Instrument[T reconcile.Object](cfg reconcile.Config[T], opts Options) (reconcile.Config[T], *Collector) {
	c := New(cfg.Kind, cfg.Cluster.Resource, opts)
	c.fastPaths = fastPathGauges(c.own, cfg.Cluster.Pods, hasVersions(cfg.Cluster.CacheVersions))
	cfg.Hooks = c.Hooks(cfg.Hooks)
	return cfg, c
}

// New returns a Collector for a controller of owners of kind, whose
// writes are recorded under resource (Config.Kind and Config.Cluster.Resource),
// for callers that cannot pass the Config through [Instrument]: set
// [Collector.Hooks] as Config.Hooks yourself. The names and labels follow
// kind as in Instrument.
func New(kind schema.GroupVersionKind, resource schema.GroupResource, opts Options) *Collector {
	return newCollector(kind, resource, opts)
}

// ExpectationsHooks returns prev with Resolved calling prev's and then
// recording: set it as the Hooks of a standalone expectations.Options or
// perpod.Options (a Controller's rounds are in [Collector.Hooks]).
func (c *Collector) ExpectationsHooks(prev expectations.Hooks) expectations.Hooks {
	h := prev
	h.Resolved = c.resolvedHook(prev.Resolved)
	return h
}

// resolvedHook returns a Resolved hook that calls prev (if set) and then
// counts the resolution.
func (c *Collector) resolvedHook(prev func(string, expectations.Resolution, time.Duration)) func(string, expectations.Resolution, time.Duration) {
	return func(key string, r expectations.Resolution, pending time.Duration) {
		if prev != nil {
			prev(key, r, pending)
		}
		c.resolved.WithLabelValues(resolutionLabel(r)).Inc()
	}
}

// Hooks returns prev with each hook the Collector records calling prev's
// first: DeletionVictim observes the victim's age ratio, CreationsStopped
// counts the stop by reason, ExpectationsResolved counts the round by
// resolution, and Deferred counts the deferral by group and resource. Set
// it as Config.Hooks.
func (c *Collector) Hooks(prev reconcile.Hooks) reconcile.Hooks {
	h := prev
	h.ExpectationsResolved = c.resolvedHook(prev.ExpectationsResolved)
	deferred := prev.Deferred
	h.Deferred = func(key string, err *expectations.StaleCacheError) {
		if deferred != nil {
			deferred(key, err)
		}
		if err != nil {
			c.skips.WithLabelValues(err.Resource.Group, err.Resource.Resource).Inc()
		}
	}
	victim := prev.DeletionVictim
	h.DeletionVictim = func(key string, v reconcile.Victim) {
		if victim != nil {
			victim(key, v)
		}
		if v.HasAgeRatio {
			c.ageRatio.Observe(v.AgeRatio)
		}
	}
	stopped := prev.CreationsStopped
	h.CreationsStopped = func(key, reason, message string) {
		if stopped != nil {
			stopped(key, reason, message)
		}
		c.stopped.WithLabelValues(reason).Inc()
	}
	return h
}
