// Package controller is a complete ReplicaSet controller built from
// reconcilekit on client-go: shared informers for pods and ReplicaSets, a
// rate-limited workqueue, and a sync that follows upstream's order of
// operations (SPEC §10) with reconcilekit doing the decisions.
//
// Where each piece comes from:
//   - pod events → [reconcile.Observer] (expectations + requests to enqueue,
//     SPEC §11), ReplicaSet deletes → Observer.OwnerDeleted;
//   - the sync → [reconcile.Manager.Sync]: expectations check before listing
//     active/terminating split, ManageReplicas (§9: slow-start
//     creates, ranked deletes, burst of 500), counts and the availability
//     requeue;
//   - claiming (R-9.5: adopt matching orphans, release owned pods that stop
//     matching) is done here with strategic-merge patches, in the pod lister
//     function Sync calls after its expectations check;
//   - the status → [status.Calculate], [status.NeedsUpdate] (the skip rule,
//     ) and [status.ForWrite], written with at most 2 UpdateStatus calls
//     and 1 GET;
//   - events SuccessfulCreate, FailedCreate, SuccessfulDelete and FailedDelete
//     through a client-go record.EventRecorder, emitted by [PodControl].
//
// With [Options.Exact] the controller uses reconcilekit's exact expectations:
// pods are named before they are created and expected by key
// (reconcile.Manager.TrackCreations), and pending expectations are resolved
// from evidence (expectations.EvidenceFirst) by comparing the resourceVersions
// of the controller's own creates with the pod informer's store version
// (LastStoreSyncResourceVersion), instead of waiting for the 5-minute
// timeout when an event was missed.
//
// The controller logs through klog's contextual logger only; everything else
// it reports through [Options.OnSync].
package controller
