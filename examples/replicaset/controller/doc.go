// Package controller is a complete ReplicaSet controller built from
// reconcilekit on client-go: shared informers for pods and ReplicaSets, a
// rate-limited workqueue, and [reconcile.Controller] doing the sync in
// upstream's order (docs/rules.md §10).
//
// Where each piece comes from:
//   - pod and ReplicaSet events → the Controller, through the handlers of
//     package adapters/clientgo (tombstones unwrapped; a deleted ReplicaSet
//     is forgotten entirely);
//   - the sync → [reconcile.Controller.Sync]: expectations check before
//     listing, adoption and release, ManageReplicas
//     (§9: slow-start creates, deletes ranked with the pods of related
//     ReplicaSets, burst of 500), the status write and the availability
//     requeue;
//   - the status → reconcile.ReplicaSetStatus (status.Calculate and the
//     skip rule, R-8.6) and clientgo.StatusWriter (the write with one
//     retry, R-8.7), which clientgo.NewConfig sets;
//   - events SuccessfulCreate, FailedCreate, SuccessfulDelete and
//     FailedDelete through a client-go record.EventRecorder, emitted by
//     clientgo.PodControl.
//
// With [Options.Exact] the controller uses reconcilekit's exact expectations:
// pods are named before they are created and expected by key, and pending
// expectations are resolved from evidence (expectations.EvidenceFirst) by
// comparing the resourceVersions of the controller's own creates with the
// pod informer's store version, instead of waiting for the 5-minute timeout
// when an event was missed.
//
// As upstream v1.37 (StaleControllerConsistencyReplicaSet, R-10.9), a sync
// is deferred while the pod or ReplicaSet informer's store is older than the
// controller's own last pod create, adoption or status write for that
// ReplicaSet: after a long informer lag it cannot act on a cache that misses
// its own pods. [Options.DisableConsistencyGate] turns that off.
//
// As upstream's Run, [Controller.Run] starts no worker before both
// informers' caches have synced, and the Controller refuses a sync asked
// before (reconcile.ErrNotSynced, retried with backoff): a sync on a pod
// cache that has not listed would create every pod again. A ReplicaSet
// whose spec kube-apiserver would reject (a selector that does not match
// the template, say, which only a fake or a custom API server lets
// through) gets its ReplicaFailure condition and no pod, and is not
// retried until it changes.
//
// The controller reports every sync through [Options.OnSync], its metrics
// through [Options.Metrics] (package adapters/telemetry and client-go's
// workqueue metrics), and logs through klog's contextual logger
// (klog.FromContext of Run's context, package adapters/clientgo's Worker):
// invalid ReplicaSet specs, expired expectations and failed syncs at the
// default level, deferrals (caches not synced, the consistency gate) at
// V(2), one line per sync at V(4). [Controller.Ready] is its readiness.
package controller
