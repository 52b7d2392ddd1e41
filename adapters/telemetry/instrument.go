package telemetry

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Instrument returns a copy of cfg whose hooks also feed a new
// [Collector], and that Collector. The hooks cfg already has (Hooks,
// Expectations.Hooks and Consistency.Deferred) keep running: each is called first, then the
// Collector's, on the same goroutine. The Collector's metric names and
// labels follow cfg.Kind (see [Options]); build the Controller from the
// returned Config, then register the Collector and hand it the sync
// results ([Collector.ObserveSync]; clientgo.Worker.Metrics and
// ctrlruntime.Options.Metrics do). cfg itself is not modified.
//
// From the hooks come the expectation rounds' resolutions
// (expectations.Hooks.Resolved), the gate's deferrals by resource
// (reconcile.ConsistencyOptions.Deferred), the deletion age ratio
// (reconcile.Hooks.DeletionVictim) and the stopped creations
// (reconcile.Hooks.CreationsStopped); the rest comes from ObserveSync.
func Instrument[T reconcile.Object](cfg reconcile.Config[T], opts Options) (reconcile.Config[T], *Collector) {
	c := New(cfg.Kind, cfg.Cluster.Resource, opts)
	cfg.Expectations.Hooks = c.ExpectationsHooks(cfg.Expectations.Hooks)
	cfg.Consistency = c.Consistency(cfg.Consistency)
	cfg.Hooks = c.Hooks(cfg.Hooks)
	return cfg, c
}

// New returns a Collector for a controller of owners of kind, whose
// writes are recorded under resource (Config.Kind and Config.Cluster.Resource),
// for callers that cannot pass the Config through [Instrument]: put
// [Collector.ExpectationsHooks], [Collector.Consistency] and [Collector.Hooks]
// into the Config yourself. The names and labels follow kind as in Instrument.
func New(kind schema.GroupVersionKind, resource schema.GroupResource, opts Options) *Collector {
	return newCollector(kind, resource, opts)
}

// ExpectationsHooks returns prev with Resolved calling prev's and then
// recording: set it as Config.Expectations.Hooks, or as the Hooks of a
// standalone expectations.Options or perpod.Options.
func (c *Collector) ExpectationsHooks(prev expectations.Hooks) expectations.Hooks {
	h := prev
	resolved := prev.Resolved
	h.Resolved = func(key string, r expectations.Resolution, pending time.Duration) {
		if resolved != nil {
			resolved(key, r, pending)
		}
		c.resolved.WithLabelValues(resolutionLabel(r)).Inc()
	}
	return h
}

// Consistency returns prev with Deferred calling prev's and then counting
// the deferral by group and resource: set it as Config.Consistency.
func (c *Collector) Consistency(prev reconcile.ConsistencyOptions) reconcile.ConsistencyOptions {
	g := prev
	deferred := prev.Deferred
	g.Deferred = func(key string, err *expectations.StaleCacheError) {
		if deferred != nil {
			deferred(key, err)
		}
		if err != nil {
			c.skips.WithLabelValues(err.Resource.Group, err.Resource.Resource).Inc()
		}
	}
	return g
}

// Hooks returns prev with DeletionVictim calling prev's and then observing
// the victim's age ratio, and CreationsStopped calling prev's and then
// counting the stop by reason: set it as Config.Hooks.
func (c *Collector) Hooks(prev reconcile.Hooks) reconcile.Hooks {
	h := prev
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
