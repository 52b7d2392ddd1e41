package telemetry_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Instrument a ReplicaSet Config, register the Collector and feed it a
// sync: the two upstream metrics keep kube-controller-manager's names.
func ExampleInstrument() {
	cfg, collector := telemetry.Instrument(reconcile.ReplicaSets(), telemetry.Options{})
	_ = cfg // build the Controller from it: reconcile.NewController(cfg)
	registry := prometheus.NewRegistry()
	registry.MustRegister(collector)

	collector.ObserveSync(reconcile.SyncResult{}, nil, 2*time.Millisecond)

	families, _ := registry.Gather()
	for _, f := range families {
		fmt.Println(f.GetName(), f.GetType())
	}
	// Output:
	// reconcilekit_creations_stopped_total COUNTER
	// reconcilekit_expectations_raised_total COUNTER
	// reconcilekit_expectations_resolved_total COUNTER
	// reconcilekit_pod_creates_total COUNTER
	// reconcilekit_pod_deletes_total COUNTER
	// reconcilekit_sync_deferrals_total COUNTER
	// reconcilekit_sync_duration_seconds HISTOGRAM
	// reconcilekit_syncs_total COUNTER
	// replicaset_controller_sorting_deletion_age_ratio HISTOGRAM
	// replicaset_controller_stale_sync_skips_total COUNTER
}
