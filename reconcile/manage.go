package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// ManageReplicas creates or deletes pods so that the owner's active pods
// approach owner.Replicas (docs/rules.md §9): at most BurstReplicas creates
// in slow-start batches, or as many deletes of the pods [podrank.ForDeletion]
// chooses (ranked with the nodes of related), each expected in the Tracker
// before its call; nothing when the count is right. active are the owner's
// claimed active pods; related, for a ReplicaSet, the pods of every
// ReplicaSet with the same controller (nil for a bare owner).
//
// The error is nil when every call succeeded, else the failures joined in
// call order ([errors.Join]); failed and unattempted calls are lowered from
// the expectations. An invalid owner, a template without labels, a nil Pods
// or a done ctx is an error before any call. It never modifies active,
// related or their pods; a panic in Pods is re-raised here after the batch
// returned. The details and the differences from upstream:
// docs/design/sync.md#the-manage-step.
func (m *Manager) ManageReplicas(ctx context.Context, owner Owner, active, related []*corev1.Pod) (Outcome, error) {
	return m.manage(ctx, owner, uniquePods(active), related, 0, nil)
}

// manageListed is the manage step of [Controller.Sync]. Its active pods are
// claimed from one listing of Config.Cluster.Pods, which repeats no pod but in a rare
// race (see [Pods]), so it skips ManageReplicas' check for repeats on every
// sync, where it cost more than it guards (docs/design/sync.md#measurements-behind-the-code).
// It checks where a repeat would do harm, before deleting: a pod counted
// twice would cost a live pod. Without the check a repeat can only make the
// step create fewer pods, never more.
//
// held counts the owner's pods that exist but are not among active (they
// left the pod cache without being deleted and are being stamped back,
// they are not replaced. A non-nil noCreate is returned whenever
// active has fewer pods than wanted (an open creation breaker, a missing
// template), and nothing is created; deleting is unaffected.
func (m *Manager) manageListed(ctx context.Context, owner Owner, active, related []*corev1.Pod, held int, noCreate error) (Outcome, error) {
	if len(active) > int(owner.Replicas) {
		active = uniquePods(active)
	}
	return m.manage(ctx, owner, active, related, held, noCreate)
}

// manage is ManageReplicas for pods without nil or repeated entries, with
// manageListed's held and noCreate.
func (m *Manager) manage(ctx context.Context, owner Owner, pods, related []*corev1.Pod, held int, noCreate error) (Outcome, error) {
	if err := owner.validate(); err != nil {
		return Outcome{}, err
	}
	diff := len(pods) - int(owner.Replicas)
	if diff < 0 && noCreate != nil {
		return Outcome{Diff: diff}, noCreate
	}
	if diff < 0 {
		diff = min(diff+held, 0)
	}
	out := Outcome{Diff: diff}
	if diff == 0 {
		return out, nil
	}
	if m.Pods == nil {
		return out, ownerErrorf(owner.Key, "Manager.Pods is nil")
	}
	if err := ctx.Err(); err != nil {
		return out, &ownerErr{key: owner.Key, err: err}
	}
	if diff < 0 {
		return m.createPods(ctx, &owner, min(-diff, m.burst()), pods, out)
	}
	return m.deletePods(ctx, &owner, pods, related, min(diff, m.burst()), out)
}
