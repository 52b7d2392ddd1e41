// Package telemetry exports what a [reconcile.Controller] does as Prometheus
// metrics: syncs by result and their duration, deferred syncs by reason
// (caches not synced, the consistency gate), pod creates and deletes,
// expectation rounds raised and how each ended, the consistency gate's
// deferrals and the deletion ranking's age ratio. The root module never
// imports Prometheus; this package is fed by the Controller's hooks and
// by the sync results the adapters' workers hand it.
//
//	cfg, collector := telemetry.Instrument(clientgo.ReplicaSets(client, factory, nil), telemetry.Options{})
//	registry.MustRegister(collector)
//	ctrl, err := reconcile.NewController(cfg)
//
// and the adapters' workers hand the Collector every sync's result:
// clientgo.Worker's Metrics field, or ctrlruntime.Options' Metrics field
// (ctrlruntime.Register also registers it in controller-runtime's
// registry). The package's clientGo example wires a whole client-go
// controller.
//
// Guarantees:
//   - No per-owner label: the series count is fixed by the controller, not
//     by the number of owners. To find a stuck owner, read
//     Controller.Tracker().Snapshot(key), or the adapters' log lines,
//     which name the owner.
//   - For apps/v1 ReplicaSets, the two metrics kube-controller-manager's
//     ReplicaSet controller exports keep upstream's names, types, labels
//     and buckets: replicaset_controller_stale_sync_skips_total and
//     replicaset_controller_sorting_deletion_age_ratio.
//   - The hooks already in the Config keep running: [Instrument] calls
//     them first, then its own.
//   - Every series that can exist is exported from the start at zero, so
//     that rate() and absence alerts work before the first event.
//
// [FastPathName] (reconcilekit_fast_path{path}) says which of the two
// fast paths that rest on controller-runtime's or client-go's internals
// runs: the direct pod-index read (pod_index) and the stores' versions the
// consistency gate reads (store_version); 0 means the fallback runs.
// [FastPaths] answers the same for a Config.
//
// [github.com/reconcilekit/reconcilekit/adapters/clientgo.WorkqueueMetrics]
// gives client-go's workqueue its metrics (workqueue_depth,
// workqueue_adds_total, …) under the names client-go's and
// controller-runtime's users know.
package telemetry
