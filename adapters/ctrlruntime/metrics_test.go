package ctrlruntime_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// The Reconciler hands every sync to its Metrics: a terminal error and a
// sync of a gone owner count under their results.
func TestReconcilerFeedsMetrics(t *testing.T) {
	bad := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(bad).Build()
	_, collector := telemetry.Instrument(reconcile.ReplicaSets(), telemetry.Options{Controller: "test"})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(collector))
	r := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: controller(t, c), Metrics: collector}
	_, err := r.Reconcile(t.Context(), crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(bad)})
	require.Error(t, err)
	_, err = r.Reconcile(t.Context(), crreconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "gone"}})
	require.NoError(t, err)
	n, err := testutil.GatherAndCount(reg, telemetry.SyncDurationName)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "one duration series per result")
	mfs, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == telemetry.SyncsName {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "result" {
						counts[l.GetValue()] = m.GetCounter().GetValue()
					}
				}
			}
		}
	}
	assert.Equal(t, map[string]float64{"ok": 1, "terminal": 1, "deferred": 0, "error": 0}, counts)
}

// Register puts Options.Metrics in controller-runtime's registry (which the
// manager's metrics server serves) and passes it to the Reconciler; a
// second registration of the same Collector is no error.
func TestRegisterRegistersMetrics(t *testing.T) {
	mgr := newManager(t)
	c := managerController(t, mgr)
	_, collector := telemetry.Instrument(reconcile.ReplicaSets(), telemetry.Options{Controller: "register-test", GenericNames: true})
	t.Cleanup(func() { metrics.Registry.Unregister(collector) })
	_, err := ctrlruntime.Register(mgr, "rs-metrics", c, ctrlruntime.Options{Metrics: collector})
	require.NoError(t, err)
	_, err = ctrlruntime.Register(mgr, "rs-metrics-2", c, ctrlruntime.Options{Metrics: collector})
	require.NoError(t, err)
	assert.False(t, metrics.Registry.Unregister(prometheus.NewCounter(prometheus.CounterOpts{Name: "unrelated"})))
	assert.True(t, metrics.Registry.Unregister(collector), "the Collector is in controller-runtime's registry")
	require.NoError(t, metrics.Registry.Register(collector))
}
