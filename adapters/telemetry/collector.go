package telemetry

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/status"
)

// Namespace is the prefix of the metrics that have no upstream name.
const Namespace = "reconcilekit"

// Names of the metrics a [Collector] exports. The two ReplicaSet names are
// kube-controller-manager's; a Collector for another kind (or with
// Options.GenericNames) exports the same metrics under the generic names.
const (
	SyncsName                   = "reconcilekit_syncs_total"
	SyncDurationName            = "reconcilekit_sync_duration_seconds"
	SyncDeferralsName           = "reconcilekit_sync_deferrals_total"
	PodCreatesName              = "reconcilekit_pod_creates_total"
	PodDeletesName              = "reconcilekit_pod_deletes_total"
	ExpectationsRaisedName      = "reconcilekit_expectations_raised_total"
	ExpectationsResolvedName    = "reconcilekit_expectations_resolved_total"
	StaleSyncSkipsName          = "reconcilekit_stale_sync_skips_total"
	SortingDeletionAgeRatioName = "reconcilekit_sorting_deletion_age_ratio"
	CreationsStoppedName        = "reconcilekit_creations_stopped_total"

	ReplicaSetStaleSyncSkipsName          = "replicaset_controller_stale_sync_skips_total"
	ReplicaSetSortingDeletionAgeRatioName = "replicaset_controller_sorting_deletion_age_ratio"
)

// Values of the result label of SyncsName and SyncDurationName.
const (
	ResultOK       = "ok"       // the sync returned nil
	ResultDeferred = "deferred" // a reconcile.ErrDeferred error: nothing read or written, retried with backoff
	ResultTerminal = "terminal" // a reconcile.ErrTerminal error (an invalid owner spec included): retrying cannot help
	ResultError    = "error"    // any other error: retried with backoff
)

// Values of the reason label of SyncDeferralsName ([Deferral]).
const (
	DeferralNotSynced  = "not_synced"  // the informer caches have not loaded their first list (reconcile.ErrNotSynced)
	DeferralStaleCache = "stale_cache" // the consistency gate: a cache is older than the controller's own writes
)

// Options configure [Instrument]. The zero value labels the metrics with
// the owners' lower-case kind and, for ReplicaSets, uses upstream's names
// for the two metrics upstream has.
type Options struct {
	// Controller is the value of the controller label of the
	// reconcilekit_ metrics. "" means the lower-case kind of Config.Kind
	// ("replicaset", "podset"), or "controller" when Kind is empty.
	Controller string
	// GenericNames exports the gate's deferrals and the deletion age
	// ratio under their reconcilekit_ names even for ReplicaSets. Upstream's
	// names carry no controller label, so two ReplicaSet Collectors cannot
	// share a registry with them; with GenericNames they can.
	GenericNames bool
}

// Collector holds a controller's metrics; it is a prometheus.Collector:
// register it in a prometheus.Registerer (client-go) or pass it to
// ctrlruntime.Options.Metrics (controller-runtime's registry). Build it with
// [Instrument]. Its methods are safe for concurrent use; the nil Collector
// records nothing.
type Collector struct {
	syncs        *prometheus.CounterVec
	syncDuration *prometheus.HistogramVec
	deferrals    *prometheus.CounterVec
	creates      *prometheus.CounterVec
	deletes      *prometheus.CounterVec
	raised       prometheus.Counter
	resolved     *prometheus.CounterVec
	skips        *prometheus.CounterVec
	ageRatio     prometheus.Histogram
	stopped      *prometheus.CounterVec
	fastPaths    []prometheus.Collector // FastPathName's gauges; set by Instrument
	own          prometheus.Labels      // the controller label
}

var _ prometheus.Collector = (*Collector)(nil)

// newCollector builds the metrics for a controller of kind, with every
// label value known in advance exported at zero.
func newCollector(kind schema.GroupVersionKind, resource schema.GroupResource, opts Options) *Collector {
	name := opts.Controller
	if name == "" {
		name = strings.ToLower(kind.Kind)
	}
	if name == "" {
		name = "controller"
	}
	own := prometheus.Labels{"controller": name}
	upstream := !opts.GenericNames && kind.Group == "apps" && kind.Kind == "ReplicaSet"
	c := &Collector{
		own: own,
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        SyncsName,
			Help:        "Syncs of owners by result: ok, deferred (nothing read or written: the informer caches have not synced, or the consistency gate waits for them to reach the controller's own writes; retried with backoff), terminal (an invalid owner or owner spec: not retried), error (retried with backoff).",
			ConstLabels: own,
		}, []string{"result"}),
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        SyncDurationName,
			Help:        "Duration of one sync of an owner in seconds, by result.",
			ConstLabels: own,
			Buckets:     prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"result"}),
		deferrals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        SyncDeferralsName,
			Help:        "Syncs deferred, by reason: not_synced (the informer caches have not loaded their first list), stale_cache (the consistency gate: a cache is older than the controller's own writes). Each is also counted under result=\"deferred\" of " + SyncsName + ".",
			ConstLabels: own,
		}, []string{"reason"}),
		creates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        PodCreatesName,
			Help:        "Pod creates by result: created; failed; skipped (not attempted after a failed slow-start batch); namespace_terminating (refused, counted as done, as upstream); already_existed (a retried name that existed: an earlier create had worked).",
			ConstLabels: own,
		}, []string{"result"}),
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        PodDeletesName,
			Help:        "Pod deletes by result: deleted; gone (NotFound or a failed UID precondition: already gone); failed; not_owned (a victim controlled by another owner, never sent).",
			ConstLabels: own,
		}, []string{"result"}),
		raised: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        ExpectationsRaisedName,
			Help:        "Rounds of expectations raised: syncs that sent creates or deletes and wait to observe them before the owner's next sync acts.",
			ConstLabels: own,
		}),
		stopped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        CreationsStoppedName,
			Help:        "Owners whose pod creates were stopped because the pods created did not become the owner's (the creation breaker, docs/rules.md R-13.7), by the failure condition's reason: CreatedPodsNotSelected (the selector does not match them as created: a stamp it excludes, a webhook rewriting labels), CreatedPodsNotObserved (the pod cache cannot see them: a cache filter they do not meet). Any increase needs a person: alert on it.",
			ConstLabels: own,
		}, []string{"reason"}),
		resolved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        ExpectationsResolvedName,
			Help:        "Rounds of expectations ended, by how: fulfilled (every expected event observed), resolved_by_evidence (the pod cache reached the controller's writes, EvidenceFirst), expired (the timeout fired, 5 minutes by default: events were missed or are late).",
			ConstLabels: own,
		}, []string{"resolution"}),
	}
	if upstream {
		c.skips = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ReplicaSetStaleSyncSkipsName,
			Help: "Total number of ReplicaSet syncs skipped due to a stale informer cache, by the group and resource of the cache that is behind (kube-controller-manager's metric).",
		}, []string{"group", "resource"})
		c.ageRatio = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    ReplicaSetSortingDeletionAgeRatioName,
			Help:    "Age of each ready pod chosen for deletion divided by the age of the youngest ready pod at that time; below 2 means the ranking spares old pods (kube-controller-manager's metric).",
			Buckets: prometheus.ExponentialBuckets(0.25, 2, 6),
		})
	} else {
		c.skips = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        StaleSyncSkipsName,
			Help:        "Syncs skipped because an informer cache was older than the controller's own writes, by the group and resource of the cache that is behind.",
			ConstLabels: own,
		}, []string{"group", "resource"})
		c.ageRatio = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        SortingDeletionAgeRatioName,
			Help:        "Age of each ready pod chosen for deletion divided by the age of the youngest ready pod at that time; below 2 means the ranking spares old pods.",
			ConstLabels: own,
			Buckets:     prometheus.ExponentialBuckets(0.25, 2, 6),
		})
	}
	for _, r := range []string{ResultOK, ResultDeferred, ResultTerminal, ResultError} {
		c.syncs.WithLabelValues(r)
		c.syncDuration.WithLabelValues(r)
	}
	for _, r := range []string{DeferralNotSynced, DeferralStaleCache} {
		c.deferrals.WithLabelValues(r)
	}
	for _, r := range []string{"created", "failed", "skipped", "namespace_terminating", "already_existed"} {
		c.creates.WithLabelValues(r)
	}
	for _, r := range []string{"deleted", "gone", "failed", "not_owned"} {
		c.deletes.WithLabelValues(r)
	}
	for _, r := range []expectations.Resolution{expectations.Fulfilled, expectations.ResolvedByEvidence, expectations.Expired} {
		c.resolved.WithLabelValues(resolutionLabel(r))
	}
	for _, r := range []string{status.CreatedPodsNotSelected, status.CreatedPodsNotObserved} {
		c.stopped.WithLabelValues(r)
	}
	c.skips.WithLabelValues(expectations.PodsResource.Group, expectations.PodsResource.Resource)
	if resource.Resource != "" {
		c.skips.WithLabelValues(resource.Group, resource.Resource)
	}
	return c
}

// resolutionLabel is the resolution label's value for r.
func resolutionLabel(r expectations.Resolution) string {
	switch r {
	case expectations.Fulfilled:
		return "fulfilled"
	case expectations.ResolvedByEvidence:
		return "resolved_by_evidence"
	case expectations.Expired:
		return "expired"
	}
	return strings.ToLower(r.String())
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if c == nil {
		return
	}
	for _, m := range c.all() {
		m.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if c == nil {
		return
	}
	for _, m := range c.all() {
		m.Collect(ch)
	}
}

func (c *Collector) all() []prometheus.Collector {
	all := []prometheus.Collector{c.syncs, c.syncDuration, c.deferrals, c.creates, c.deletes, c.raised, c.resolved, c.skips, c.ageRatio, c.stopped}
	return append(all, c.fastPaths...)
}
