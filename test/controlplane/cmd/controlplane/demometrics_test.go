package main

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The summary reads the numbers of one scrape: syncs by result and their
// mean duration, the gate's skips by cache, pod creates and deletes,
// expectation rounds, the age ratio and the workqueue.
func TestWriteMetricsSummary(t *testing.T) {
	const exposition = `
# TYPE reconcilekit_syncs_total counter
reconcilekit_syncs_total{controller="replicaset",result="ok"} 90
reconcilekit_syncs_total{controller="replicaset",result="deferred"} 8
reconcilekit_syncs_total{controller="replicaset",result="error"} 2
reconcilekit_syncs_total{controller="replicaset",result="terminal"} 0
# TYPE reconcilekit_sync_duration_seconds histogram
reconcilekit_sync_duration_seconds_bucket{controller="replicaset",result="ok",le="+Inf"} 90
reconcilekit_sync_duration_seconds_sum{controller="replicaset",result="ok"} 0.9
reconcilekit_sync_duration_seconds_count{controller="replicaset",result="ok"} 90
reconcilekit_sync_duration_seconds_bucket{controller="replicaset",result="error",le="+Inf"} 10
reconcilekit_sync_duration_seconds_sum{controller="replicaset",result="error"} 0.1
reconcilekit_sync_duration_seconds_count{controller="replicaset",result="error"} 10
# TYPE replicaset_controller_stale_sync_skips_total counter
replicaset_controller_stale_sync_skips_total{group="",resource="pods"} 5
replicaset_controller_stale_sync_skips_total{group="apps",resource="replicasets"} 3
# TYPE reconcilekit_pod_creates_total counter
reconcilekit_pod_creates_total{controller="replicaset",result="created"} 1005
reconcilekit_pod_creates_total{controller="replicaset",result="failed"} 4
# TYPE reconcilekit_pod_deletes_total counter
reconcilekit_pod_deletes_total{controller="replicaset",result="deleted"} 995
# TYPE reconcilekit_expectations_raised_total counter
reconcilekit_expectations_raised_total{controller="replicaset"} 40
# TYPE reconcilekit_expectations_resolved_total counter
reconcilekit_expectations_resolved_total{controller="replicaset",resolution="fulfilled"} 39
reconcilekit_expectations_resolved_total{controller="replicaset",resolution="expired"} 1
# TYPE replicaset_controller_sorting_deletion_age_ratio histogram
replicaset_controller_sorting_deletion_age_ratio_bucket{le="1"} 900
replicaset_controller_sorting_deletion_age_ratio_bucket{le="2"} 990
replicaset_controller_sorting_deletion_age_ratio_bucket{le="+Inf"} 995
replicaset_controller_sorting_deletion_age_ratio_sum 500
replicaset_controller_sorting_deletion_age_ratio_count 995
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="replicaset"} 120
# TYPE workqueue_retries_total counter
workqueue_retries_total{name="replicaset"} 10
`
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	require.NoError(t, err)
	var b strings.Builder
	writeMetricsSummary(&b, mfs, "test")
	got := b.String()
	for _, want := range []string{
		"syncs 100: 90 ok, 8 deferred by the consistency gate, 2 failed (retried), 0 terminal; mean 10.0 ms",
		"pods 5, replicasets 3",
		"1005 created, 4 failed, 0 skipped after a failed batch; pod deletes: 995 deleted, 0 already gone, 0 failed",
		"40 raised; ended 39 fulfilled, 0 resolved by evidence, 1 expired",
		"995 ready victims, 990 of them below 2",
		"120 adds, 10 retries",
	} {
		assert.Contains(t, got, want)
	}
	url, ok := metricsURL("serving metrics on http://127.0.0.1:4242/metrics")
	assert.True(t, ok)
	assert.Equal(t, "http://127.0.0.1:4242/metrics", url)
}
