package telemetry_test

import (
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// indexedPods is a reconcile.Pods whose direct index read can be turned
// on, as ctrlruntime.Pods' is once AddIndexes has run. It models nothing
// else: its lookups are not called.
type indexedPods struct {
	reconcile.Pods
	direct *atomic.Bool
}

func (p indexedPods) DirectIndex() bool { return p.direct.Load() }

// gauges returns FastPathName's series of reg by path.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	mf, ok := families(t, reg)[telemetry.FastPathName]
	if !ok {
		return out
	}
	assert.Equal(t, dto.MetricType_GAUGE, mf.GetType())
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		assert.Len(t, labels, 2, "controller and path")
		assert.Equal(t, "replicaset", labels["controller"])
		out[labels["path"]] = m.GetGauge().GetValue()
	}
	return out
}

// reconcilekit_fast_path has one series per fast path the Config has, read
// at each scrape: the pod index when its Pods can read one directly (0
// until the index is found, then 1), the store version when the Config
// reads cache versions (1 exactly where client-go's stores track them:
// v0.36 and newer, so 0 at the floor of adapters/go.mod and 1 in `make
// compat`). A Config without either has no series.
func TestFastPathGauge(t *testing.T) {
	minor, ok := storeversion.ClientGoMinor()
	require.True(t, ok, "the test binary names its k8s.io/client-go version")
	storeVersion := 0.0
	if minor >= storeversion.TrackedFrom {
		storeVersion = 1
	}

	plain := reconcile.ReplicaSets()
	_, c := telemetry.Instrument(plain, telemetry.Options{})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	assert.Empty(t, gauges(t, reg), "no fast path: no series")
	assert.Empty(t, telemetry.FastPaths(plain))

	direct := &atomic.Bool{}
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Pods = indexedPods{direct: direct}
	cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: func() string { return "" }}
	_, c = telemetry.Instrument(cfg, telemetry.Options{})
	reg = prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	assert.Equal(t, map[string]float64{telemetry.FastPathPodIndex: 0, telemetry.FastPathStoreVersion: storeVersion}, gauges(t, reg),
		"client-go v0.%d, no index yet", minor)
	assert.Equal(t, map[string]bool{telemetry.FastPathPodIndex: false, telemetry.FastPathStoreVersion: storeVersion == 1}, telemetry.FastPaths(cfg))
	direct.Store(true)
	assert.Equal(t, map[string]float64{telemetry.FastPathPodIndex: 1, telemetry.FastPathStoreVersion: storeVersion}, gauges(t, reg),
		"client-go v0.%d, the index found", minor)
	assert.True(t, telemetry.FastPaths(cfg)[telemetry.FastPathPodIndex])
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)

	var _ reconcile.Config[*appsv1.ReplicaSet] = cfg
}
