package reconcile

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/status"
)

// SyncRequest is the input of [Manager.Sync]: the owner, as read from the
// cache, and how to get its pods. The caller has already handled an owner
// that no longer exists (R-10.2: [Observer.OwnerDeleted], no Sync) and
// an invalid selector.
type SyncRequest struct {
	// Owner is the owner to sync.
	Owner Owner
	// Deleting reports that the owner has a deletion timestamp: its pods
	// are then counted but neither created nor deleted.
	Deleting bool
	// MinReadySeconds is the owner's minReadySeconds, for the available
	// count and the availability requeue.
	MinReadySeconds int32
	// Pods returns the owner's claimed pods in any state: the
	// pods whose controller ownerRef names the owner and whose labels match
	// its selector, plus the orphans the caller adopted. Sync splits them
	// into active and terminating pods. It is called once, after the
	// expectations were checked, and is required; its error ends
	// the sync.
	Pods func(ctx context.Context) ([]*corev1.Pod, error)
	// Related returns the pods whose nodes count towards the deletion rank
	// e.g. the pods of every ReplicaSet that shares the owner's
	// controller. It is called only when pods must be deleted. Nil means
	// none (every rank 0, as for a bare ReplicaSet). An error is reported
	// in SyncResult.RelatedErr and the deletion proceeds with zero ranks, as
	// upstream logs and carries on.
	Related func(ctx context.Context) ([]*corev1.Pod, error)
}

// SyncResult reports what [Manager.Sync] saw and did. Its slices are new;
// the pods in them are the caller's.
type SyncResult struct {
	// Satisfied is the expectations check made before the pods were read
	// Expectations.Satisfied.
	Satisfied bool
	// Expectations is that check in full (expectations.Tracker.Check):
	// why the owner is or is not satisfied, e.g. Expired or
	// ResolvedByEvidence, and the pending counts at that moment.
	Expectations expectations.Status
	// Managed reports that ManageReplicas ran: Satisfied and not Deleting
	// . Outcome and ManageErr are its results.
	Managed bool
	// Outcome is what ManageReplicas did; the zero Outcome when it did
	// not run.
	Outcome Outcome
	// ManageErr is the error of the manage step (ManageReplicas), nil when
	// it succeeded or did not run. It is reported here only: Sync itself
	// returns a nil error when the manage step failed, because the sync
	// still ran to the end and the result is complete. The caller must, in
	// this order:
	//  1. compute and write the status with it (status.Calculate's manageErr,
	//     or status.SetReplicaFailure for a custom resource), so that a
	//     ReplicaFailure condition reports it;
	//  2. return the status write error, if the write failed;
	//  3. otherwise return ManageErr, if it is non-nil, so that its
	//     workqueue retries the owner with backoff;
	//  4. otherwise honour Requeue.
	ManageErr error
	// RelatedErr is the error of SyncRequest.Related, if it was called and
	// failed; the deletion then used zero ranks.
	RelatedErr error
	// Active and Terminating are the pods SyncRequest.Pods returned that
	// are active and terminating, in their order; nil when
	// there are none. Pass them to status.Calculate.
	Active, Terminating []*corev1.Pod
	// Diff is len(Active) − Owner.Replicas, the diff a status condition
	// reason is chosen by (R-8.4, status.SetReplicaFailure).
	Diff int
	// Counts are the replica counts of Active and Terminating at Now
	// for a custom resource's status.
	Counts status.Counts
	// Now is the single clock reading the status must be computed at
	// taken after the manage step.
	Now time.Time
	// Requeue and RequeueAfter are the availability requeue: sync
	// the owner again after RequeueAfter so that ready pods become
	// available once MinReadySeconds have passed. Requeue is false when the
	// manage step failed, when MinReadySeconds <= 0, or when every ready
	// pod is available. The delay is measured from a clock reading taken
	// at the end of Sync. Upstream requeues only when its status write
	// also succeeded: a caller whose status write fails returns that error
	// (and its workqueue retries with backoff) instead of honouring Requeue.
	Requeue      bool
	RequeueAfter time.Duration
}

// Sync runs one sync of an owner in upstream's order (SPEC §10), minus
// what needs an API client: listing (SyncRequest.Pods), claiming, and the
// status write, which the caller does with the result.
//
//  1. The owner's expectations are checked, before the pods are
//     read, so that a pod observed in between cannot be missed.
//  2. The pods are read and split into active and terminating.
//  3. ManageReplicas runs when the expectations are satisfied and the owner
//     is not being deleted.
//  4. The clock is read once for the counts, and the availability
//     requeue decided.
//
// Sync's error is non-nil only when the sync did not run to the end: for an
// invalid request (invalid Owner, nil Pods), in which case nothing was
// called, or when SyncRequest.Pods failed, in which case ManageReplicas was
// not called. The result is then incomplete: the caller must not write a
// status from it, and returns the error so that its workqueue retries.
//
// A failed manage step is not an error of Sync: it is reported only in
// SyncResult.ManageErr, with a complete result. When Sync returns nil, the
// caller, in this order:
//  1. computes the status from the result with SyncResult.ManageErr
//     (status.Calculate and status.NeedsUpdate for a ReplicaSet; Counts and
//     status.SetReplicaFailure for a custom resource) and writes it;
//  2. returns a status write error, if any;
//  3. otherwise returns SyncResult.ManageErr, if non-nil;
//  4. otherwise honours Requeue.
//
// In code:
//
//	res, err := m.Sync(ctx, req)
//	if err != nil {
//		return err
//	}
//	if err := writeStatus(status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, opts)); err != nil {
//		return err
//	}
//	if res.ManageErr != nil {
//		return res.ManageErr
//	}
//	if res.Requeue { // never set when the manage step failed
//		queue.AddAfter(key, res.RequeueAfter)
//	}
//	return nil
//
// Sync is safe for concurrent use under the Manager's rule: one call per
// owner key at a time.
func (m *Manager) Sync(ctx context.Context, req SyncRequest) (SyncResult, error) {
	o := &req.Owner
	if err := o.validate(); err != nil {
		return SyncResult{}, err
	}
	if req.Pods == nil {
		return SyncResult{}, fmt.Errorf("reconcile: owner %s: SyncRequest.Pods is nil", o.Key)
	}
	check := m.Tracker().Check(o.Key)
	res := SyncResult{Satisfied: check.Satisfied, Expectations: check}
	all, err := req.Pods(ctx)
	if err != nil {
		return res, fmt.Errorf("reconcile: owner %s: listing pods: %w", o.Key, err)
	}
	res.Active = podrank.FilterActive(all)
	res.Terminating = podrank.FilterTerminating(all)
	res.Diff = len(res.Active) - int(o.Replicas)

	if res.Satisfied && !req.Deleting {
		var related []*corev1.Pod
		if req.Related != nil && res.Diff > 0 {
			related, res.RelatedErr = req.Related(ctx)
			if res.RelatedErr != nil {
				related = nil
			}
		}
		res.Managed = true
		res.Outcome, res.ManageErr = m.ManageReplicas(ctx, *o, res.Active, related)
	}

	res.Now = m.now()
	var labels map[string]string
	if o.Template != nil {
		labels = o.Template.Labels
	}
	res.Counts = status.Count(res.Active, res.Terminating, labels, req.MinReadySeconds, res.Now)
	if res.ManageErr != nil {
		// no availability requeue after a failed manage step. The
		// sync still ran to the end, so the error is not Sync's.
		return res, nil
	}
	res.RequeueAfter, res.Requeue = status.RequeueAfter(res.Counts.Ready, res.Counts.Available,
		res.Active, req.MinReadySeconds, res.Now, m.now())
	return res, nil
}
