package clientgo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// A queue built with the provider exports client-go's workqueue metrics,
// labelled by its name; a second provider over the same registry shares
// them.
func TestWorkqueueMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	provider, err := clientgo.WorkqueueMetrics(reg)
	require.NoError(t, err)
	again, err := clientgo.WorkqueueMetrics(reg)
	require.NoError(t, err, "a second provider over the same registry")
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "replicaset", MetricsProvider: provider})
	other := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "other", MetricsProvider: again})
	t.Cleanup(func() { q.ShutDown(); other.ShutDown() })

	q.Add("ns/a")
	q.Add("ns/b")
	assert.Equal(t, 2.0, gaugeValue(t, reg, "workqueue_depth", "replicaset"))
	key, _ := q.Get()
	q.AddRateLimited(key)
	q.Done(key)
	other.Add("x")

	expected := `
# HELP workqueue_adds_total Total number of adds handled by the workqueue.
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="other"} 1
workqueue_adds_total{name="replicaset"} 2
# HELP workqueue_retries_total Total number of retries handled by the workqueue.
# TYPE workqueue_retries_total counter
workqueue_retries_total{name="other"} 0
workqueue_retries_total{name="replicaset"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "workqueue_adds_total", "workqueue_retries_total"))
	n, err := testutil.GatherAndCount(reg, "workqueue_work_duration_seconds", "workqueue_queue_duration_seconds",
		"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds")
	require.NoError(t, err)
	assert.Equal(t, 2*4, n, "each of the four, per queue")
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)

	_, err = clientgo.WorkqueueMetrics(nil)
	assert.Error(t, err)
}

// gaugeValue returns the gauge name of queue.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name, queue string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == name && m.GetLabel()[0].GetValue() == queue {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s for %s", name, queue)
	return 0
}

// A Worker with Metrics over a fake cluster: the creates it made, the
// rounds it raised and their resolution by observation show in the
// Collector.
func TestWorkerFeedsMetrics(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	factory := informers.NewSharedInformerFactory(c.Clientset, 0)
	cfg := clientgo.ReplicaSets(c.Clientset, factory, nil)
	cfg.DisableConsistencyGate = true // every sync counts as ok
	cfg, collector := telemetry.Instrument(cfg, telemetry.Options{})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(collector))
	ctrl, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	require.NoError(t, clientgo.Register(ctrl, factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer(), q))
	ctx, cancel := context.WithCancel(t.Context())
	factory.Start(ctx.Done())
	waitForCaches(t, ctx, factory)
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.NoError(t, clientgo.Worker{Queue: q, Sync: ctrl.Sync, Metrics: collector}.Run(ctx, 2))
	}()
	t.Cleanup(func() { cancel(); <-done; factory.Shutdown() })

	_, err = c.Clientset.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet("web", 3), metav1.CreateOptions{})
	require.NoError(t, err)
	value := func(name, label, v string) float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if mf.GetName() == name && (label == "" || l.GetName() == label && l.GetValue() == v) {
						return m.GetCounter().GetValue()
					}
				}
			}
		}
		return -1
	}
	eventually(t, func() bool {
		return value(telemetry.ExpectationsResolvedName, "resolution", "fulfilled") == 1
	}, "the round resolved by observing the 3 creations")
	assert.Equal(t, 3.0, value(telemetry.PodCreatesName, "result", "created"))
	assert.Equal(t, 1.0, value(telemetry.ExpectationsRaisedName, "", ""))
	assert.Positive(t, value(telemetry.SyncsName, "result", "ok"))
	assert.Zero(t, value(telemetry.SyncsName, "result", "error"))
}
