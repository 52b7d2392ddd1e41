package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

var podSetKind = schema.GroupVersionKind{Group: "demo.reconcilekit.dev", Version: "v1alpha1", Kind: "PodSet"}

// instrumented returns a ReplicaSet Config (or one for PodSets), instrumented,
// and its Collector registered in a fresh registry.
func instrumented(t *testing.T, kind schema.GroupVersionKind, opts telemetry.Options) (reconcile.Config[*appsv1.ReplicaSet], *telemetry.Collector, *prometheus.Registry) {
	t.Helper()
	cfg := reconcile.ReplicaSets()
	if kind != cfg.Kind {
		cfg.Kind, cfg.Cluster.Resource = kind, schema.GroupResource{Group: kind.Group, Resource: "podsets"}
	}
	cfg, c := telemetry.Instrument(cfg, opts)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	return cfg, c, reg
}

// families gathers reg into name → family.
func families(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// value returns the counter (or histogram sample count) of name whose labels
// include want; it fails when there is none.
func value(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mf, ok := families(t, reg)[name]
	require.True(t, ok, "no metric %s", name)
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	t.Fatalf("no series of %s with labels %v", name, want)
	return 0
}

// The exported names, types and label sets are part of the API: dashboards
// and alerts depend on them. For ReplicaSets the two upstream metrics keep
// kube-controller-manager's names, labels and buckets.
func TestNamesTypesAndLabelsAreStable(t *testing.T) {
	type family struct {
		typ    dto.MetricType
		labels string
	}
	own := map[string]family{
		telemetry.SyncsName:                {dto.MetricType_COUNTER, "controller,result"},
		telemetry.SyncDurationName:         {dto.MetricType_HISTOGRAM, "controller,result"},
		telemetry.SyncDeferralsName:        {dto.MetricType_COUNTER, "controller,reason"},
		telemetry.PodCreatesName:           {dto.MetricType_COUNTER, "controller,result"},
		telemetry.PodDeletesName:           {dto.MetricType_COUNTER, "controller,result"},
		telemetry.ExpectationsRaisedName:   {dto.MetricType_COUNTER, "controller"},
		telemetry.ExpectationsResolvedName: {dto.MetricType_COUNTER, "controller,resolution"},
		telemetry.CreationsStoppedName:     {dto.MetricType_COUNTER, "controller,reason"},
	}
	withNames := func(extra map[string]family) map[string]family {
		m := map[string]family{}
		for k, v := range own {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		kind schema.GroupVersionKind
		opts telemetry.Options
		want map[string]family
	}{
		{"ReplicaSet: upstream's names", reconcile.ReplicaSets().Kind, telemetry.Options{}, withNames(map[string]family{
			"replicaset_controller_stale_sync_skips_total":     {dto.MetricType_COUNTER, "group,resource"},
			"replicaset_controller_sorting_deletion_age_ratio": {dto.MetricType_HISTOGRAM, ""},
		})},
		{"ReplicaSet with GenericNames", reconcile.ReplicaSets().Kind, telemetry.Options{GenericNames: true}, withNames(map[string]family{
			"reconcilekit_stale_sync_skips_total":     {dto.MetricType_COUNTER, "controller,group,resource"},
			"reconcilekit_sorting_deletion_age_ratio": {dto.MetricType_HISTOGRAM, "controller"},
		})},
		{"another kind", podSetKind, telemetry.Options{}, withNames(map[string]family{
			"reconcilekit_stale_sync_skips_total":     {dto.MetricType_COUNTER, "controller,group,resource"},
			"reconcilekit_sorting_deletion_age_ratio": {dto.MetricType_HISTOGRAM, "controller"},
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, reg := instrumented(t, tt.kind, tt.opts)
			// One observation each, so that the histograms show up too.
			c.ObserveSync(reconcile.SyncResult{}, nil, time.Millisecond)
			got := map[string]family{}
			for name, mf := range families(t, reg) {
				var labels []string
				for _, l := range mf.GetMetric()[0].GetLabel() {
					labels = append(labels, l.GetName())
				}
				slices.Sort(labels)
				got[name] = family{mf.GetType(), strings.Join(labels, ",")}
				assert.NotEmpty(t, mf.GetHelp(), name)
			}
			for name, f := range tt.want {
				if f.typ == dto.MetricType_HISTOGRAM && got[name].typ == 0 {
					continue // a histogram without a label value has no series until observed
				}
				assert.Equal(t, f, got[name], name)
			}
			for name := range got {
				assert.Contains(t, tt.want, name, "unexpected metric")
			}
			problems, err := testutil.CollectAndLint(c)
			require.NoError(t, err)
			assert.Empty(t, problems)
		})
	}
}

// Upstream's sorting_deletion_age_ratio buckets: 0.25 doubling six times.
func TestAgeRatioBucketsAreUpstreams(t *testing.T) {
	cfg, _, reg := instrumented(t, reconcile.ReplicaSets().Kind, telemetry.Options{})
	cfg.Hooks.DeletionVictim("ns/rs", reconcile.Victim{AgeRatio: 1.5, HasAgeRatio: true})
	mf := families(t, reg)[telemetry.ReplicaSetSortingDeletionAgeRatioName]
	require.NotNil(t, mf)
	var bounds []float64
	for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	assert.Equal(t, []float64{0.25, 0.5, 1, 2, 4, 8}, bounds)
}

// sentinel is an error that matches the sentinels it wraps, as the
// library's deferral and invalid-spec errors do.
type sentinel struct {
	msg  string
	errs []error
}

func (e *sentinel) Error() string   { return e.msg }
func (e *sentinel) Unwrap() []error { return e.errs }

// Every sync counts once under its result, with its duration; a deferral
// also counts once under its reason.
func TestObserveSyncByResult(t *testing.T) {
	stale := &expectations.StaleCacheError{Key: "ns/a", Resource: expectations.PodsResource, Written: "9", Read: "7"}
	tests := []struct {
		name   string
		err    error
		want   string
		reason string
	}{
		{"nil", nil, telemetry.ResultOK, ""},
		{"R-10.9 gate deferral", &sentinel{"reconcile: owner ns/a: sync deferred", []error{reconcile.ErrDeferred, stale}}, telemetry.ResultDeferred, telemetry.DeferralStaleCache},
		{"R-10.9 a bare StaleCacheError", fmt.Errorf("reconcile: owner ns/a: deferred: %w", stale), telemetry.ResultDeferred, telemetry.DeferralStaleCache},
		{"R-14.8 caches not synced", &sentinel{"reconcile: owner ns/a: sync deferred", []error{reconcile.ErrDeferred, reconcile.ErrNotSynced}}, telemetry.ResultDeferred, telemetry.DeferralNotSynced},
		{"R-14.7 invalid spec", &sentinel{"reconcile: owner ns/a: invalid spec", []error{reconcile.ErrInvalidSpec, reconcile.ErrTerminal}}, telemetry.ResultTerminal, ""},
		{"R-14.9 cluster-scoped", fmt.Errorf("reconcile: owner a: %w", &sentinel{"cluster-scoped", []error{reconcile.ErrClusterScoped, reconcile.ErrTerminal}}), telemetry.ResultTerminal, ""},
		{"terminal", fmt.Errorf("bad selector: %w", reconcile.ErrTerminal), telemetry.ResultTerminal, ""},
		{"other", errors.New("conflict"), telemetry.ResultError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, reg := instrumented(t, podSetKind, telemetry.Options{})
			assert.Equal(t, tt.want, telemetry.Result(tt.err))
			assert.Equal(t, tt.reason, telemetry.Deferral(tt.err))
			c.ObserveSync(reconcile.SyncResult{}, tt.err, 3*time.Millisecond)
			for _, r := range []string{telemetry.ResultOK, telemetry.ResultDeferred, telemetry.ResultTerminal, telemetry.ResultError} {
				want := 0.0
				if r == tt.want {
					want = 1
				}
				assert.Equal(t, want, value(t, reg, telemetry.SyncsName, map[string]string{"result": r, "controller": "podset"}), r)
				assert.Equal(t, want, value(t, reg, telemetry.SyncDurationName, map[string]string{"result": r}), r)
			}
			for _, r := range []string{telemetry.DeferralNotSynced, telemetry.DeferralStaleCache} {
				want := 0.0
				if r == tt.reason {
					want = 1
				}
				assert.Equal(t, want, value(t, reg, telemetry.SyncDeferralsName, map[string]string{"reason": r, "controller": "podset"}), r)
			}
		})
	}
}

// The manage step's Outcome moves the pod counters and the raised rounds;
// a sync whose manage step did not run moves none of them.
func TestObserveSyncOutcome(t *testing.T) {
	pods := func(n int) []*corev1.Pod { return make([]*corev1.Pod, n) }
	tests := []struct {
		name    string
		res     reconcile.SyncResult
		creates map[string]float64
		deletes map[string]float64
		raised  float64
	}{
		{"not managed", reconcile.SyncResult{Outcome: reconcile.Outcome{Diff: -3, Expected: 3, Created: pods(3)}}, nil, nil, 0},
		{"creates", reconcile.SyncResult{Managed: true, Outcome: reconcile.Outcome{
			Diff: -10, Expected: 10, Created: pods(4), CreateFailed: 1, Skipped: 2, NamespaceTerminating: 2, AlreadyExisted: 1,
		}}, map[string]float64{"created": 4, "failed": 1, "skipped": 2, "namespace_terminating": 2, "already_existed": 1}, nil, 1},
		{"deletes", reconcile.SyncResult{Managed: true, Outcome: reconcile.Outcome{
			Diff: 6, Expected: 6, Deleted: pods(2), Gone: pods(1), DeleteFailed: pods(1), NotOwned: pods(2),
		}}, nil, map[string]float64{"deleted": 2, "gone": 1, "failed": 1, "not_owned": 2}, 1},
		{"every victim refused: nothing expected", reconcile.SyncResult{Managed: true, Outcome: reconcile.Outcome{
			Diff: 2, Expected: 2, NotOwned: pods(2),
		}}, nil, map[string]float64{"not_owned": 2}, 0},
		{"in sync", reconcile.SyncResult{Managed: true}, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, reg := instrumented(t, podSetKind, telemetry.Options{})
			c.ObserveSync(tt.res, nil, time.Millisecond)
			for _, r := range []string{"created", "failed", "skipped", "namespace_terminating", "already_existed"} {
				assert.Equal(t, tt.creates[r], value(t, reg, telemetry.PodCreatesName, map[string]string{"result": r}), "creates "+r)
			}
			for _, r := range []string{"deleted", "gone", "failed", "not_owned"} {
				assert.Equal(t, tt.deletes[r], value(t, reg, telemetry.PodDeletesName, map[string]string{"result": r}), "deletes "+r)
			}
			assert.Equal(t, tt.raised, value(t, reg, telemetry.ExpectationsRaisedName, nil))
		})
	}
}

// The hooks a Config already has keep receiving, first, and the Config
// passed in is not modified.
func TestInstrumentCombinesHooks(t *testing.T) {
	var calls []string
	cfg := reconcile.ReplicaSets()
	cfg.Hooks.ExpectationsResolved = func(key string, r expectations.Resolution, _ time.Duration) {
		calls = append(calls, "resolved "+key+" "+r.String())
	}
	cfg.Hooks.Deferred = func(key string, _ *expectations.StaleCacheError) { calls = append(calls, "deferred "+key) }
	cfg.Hooks.DeletionVictim = func(key string, _ reconcile.Victim) { calls = append(calls, "victim "+key) }
	cfg.Hooks.CreateBatch = func(key string, _ int) { calls = append(calls, "batch "+key) }
	cfg.Hooks.CreationsStopped = func(key, reason, _ string) { calls = append(calls, "stopped "+key+" "+reason) }
	before := fmt.Sprintf("%p %p %p", cfg.Hooks.ExpectationsResolved, cfg.Hooks.Deferred, cfg.Hooks.DeletionVictim)

	got, c := telemetry.Instrument(cfg, telemetry.Options{})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	assert.Equal(t, before, fmt.Sprintf("%p %p %p", cfg.Hooks.ExpectationsResolved, cfg.Hooks.Deferred, cfg.Hooks.DeletionVictim), "the caller's Config changed")

	got.Hooks.ExpectationsResolved("ns/a", expectations.Expired, time.Minute)
	got.Hooks.Deferred("ns/a", &expectations.StaleCacheError{Resource: expectations.PodsResource})
	got.Hooks.DeletionVictim("ns/a", reconcile.Victim{AgeRatio: 3, HasAgeRatio: true})
	got.Hooks.CreateBatch("ns/a", 1)
	got.Hooks.CreationsStopped("ns/a", status.CreatedPodsNotObserved, "stopped")
	assert.Equal(t, []string{"resolved ns/a Expired", "deferred ns/a", "victim ns/a", "batch ns/a", "stopped ns/a CreatedPodsNotObserved"}, calls)
	assert.Equal(t, 1.0, value(t, reg, telemetry.CreationsStoppedName, map[string]string{"reason": status.CreatedPodsNotObserved}))
	assert.Equal(t, 0.0, value(t, reg, telemetry.CreationsStoppedName, map[string]string{"reason": status.CreatedPodsNotSelected}))
	assert.Equal(t, 1.0, value(t, reg, telemetry.ExpectationsResolvedName, map[string]string{"resolution": "expired"}))
	assert.Equal(t, 1.0, value(t, reg, telemetry.ReplicaSetStaleSyncSkipsName, map[string]string{"group": "", "resource": "pods"}))
	assert.Equal(t, 1.0, value(t, reg, telemetry.ReplicaSetSortingDeletionAgeRatioName, nil))
}

// A real Tracker and Gate built from the instrumented Config move the
// resolution and deferral counters when, and only when, the Tracker
// resolves a round or the Gate defers a sync: fulfilled by observation, expired by the timeout,
// resolved by evidence (EvidenceFirst), deferred by the gate.
func TestTrackerHooksMoveTheCounters(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	cacheRV := "5"
	cfg, _, reg := instrumented(t, reconcile.ReplicaSets().Kind, telemetry.Options{})
	gate := expectations.NewGate(expectations.GateOptions{
		Caches:   map[schema.GroupResource]func() string{expectations.PodsResource: func() string { return cacheRV }},
		Deferred: cfg.Hooks.Deferred,
	})
	tr := expectations.New(expectations.Options{
		Clock:  clock,
		Policy: expectations.EvidenceFirst,
		Gate:   gate,
		Hooks:  expectations.Hooks{Resolved: cfg.Hooks.ExpectationsResolved},
	})
	resolved := func(r string) float64 {
		return value(t, reg, telemetry.ExpectationsResolvedName, map[string]string{"resolution": r})
	}

	// Fulfilled by observation.
	tr.ExpectCreations("ns/a", 1)
	assert.False(t, tr.Satisfied("ns/a"))
	tr.CreationObserved("ns/a")
	assert.True(t, tr.Satisfied("ns/a"))
	assert.True(t, tr.Satisfied("ns/a"))
	assert.Equal(t, 1.0, resolved("fulfilled"), "once per round")

	// Resolved by evidence: the pod cache reached the controller's write.
	tr.ExpectCreations("ns/b", 1)
	gate.Wrote("ns/b", types.UID("b"), expectations.PodsResource, "6")
	assert.False(t, tr.Satisfied("ns/b"))
	cacheRV = "6"
	assert.True(t, tr.Satisfied("ns/b"))
	assert.Equal(t, 1.0, resolved("resolved_by_evidence"))

	// Expired: no evidence, the TTL passes.
	tr.ExpectCreations("ns/c", 2)
	assert.False(t, tr.Satisfied("ns/c"))
	clock.Step(expectations.DefaultTTL + time.Second)
	assert.True(t, tr.Satisfied("ns/c"))
	assert.Equal(t, 1.0, resolved("expired"))
	assert.Equal(t, 1.0, resolved("fulfilled"))

	// Deferred by the gate while the pod cache is behind a write.
	skips := func() float64 {
		return value(t, reg, telemetry.ReplicaSetStaleSyncSkipsName, map[string]string{"group": "", "resource": "pods"})
	}
	gate.Wrote("ns/d", types.UID("d"), expectations.PodsResource, "9")
	require.Error(t, gate.Ready("ns/d"))
	require.Error(t, gate.Ready("ns/d"))
	assert.Equal(t, 2.0, skips())
	cacheRV = "9"
	require.NoError(t, gate.Ready("ns/d"))
	assert.Equal(t, 2.0, skips())
}

// podControl creates and deletes nothing, successfully.
type podControl struct{}

func (podControl) CreatePod(_ context.Context, p *corev1.Pod) (*corev1.Pod, error) { return p, nil }
func (podControl) DeletePod(context.Context, *corev1.Pod) error                    { return nil }

// The Manager's DeletionVictim hook feeds the age ratio with ready victims
// only.
func TestDeletionAgeRatioFromTheManager(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cfg, _, reg := instrumented(t, reconcile.ReplicaSets().Kind, telemetry.Options{})
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "rs"}}
	pod := func(name string, age time.Duration, ready bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(now.Add(-age)),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
		}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		return p
	}
	active := []*corev1.Pod{pod("young", time.Minute, true), pod("old", time.Hour, true), pod("unready", 2*time.Hour, false)}
	m := &reconcile.Manager{Pods: podControl{}, Clock: fakeclock.New(now), Hooks: cfg.Hooks}
	owner := reconcile.ReplicaSetOwner(rs)
	owner.Replicas = 0
	_, err := m.ManageReplicas(t.Context(), owner, active, nil)
	require.NoError(t, err)
	assert.Equal(t, 2.0, value(t, reg, telemetry.ReplicaSetSortingDeletionAgeRatioName, nil), "two ready victims")
}

// The nil Collector records nothing and does not panic.
func TestNilCollector(t *testing.T) {
	var c *telemetry.Collector
	c.ObserveSync(reconcile.SyncResult{Managed: true}, nil, time.Second)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	assert.Empty(t, mfs)
}
