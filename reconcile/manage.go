package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ManageReplicas creates or deletes pods so that the owner's active pods
// approach owner.Replicas (docs/rules.md §9). active are the owner's active pods
// (claimed ); related are the pods whose nodes count towards
// the deletion rank (R-7.1, R-7.2: for a ReplicaSet, the pods of every
// ReplicaSet with the same controller; nil for a bare owner).
//
// With d = active pods − owner.Replicas:
//   - d < 0: n = min(−d, burst) creations are expected (ExpectCreations, or
//     ExpectCreationKeys with TrackCreations) before the first create, and
//     made in slow-start batches. A NamespaceTerminating failure counts as a
//     success; other failures and the creates never attempted are lowered.
//   - d > 0: n = min(d, burst) victims are chosen with [podrank.ForDeletion]
//     (ranks from related, Now from Clock), their keys expected
//     (ExpectDeletions) before any call, and all deleted concurrently. Every
//     failed delete is lowered through its pod key; NotFound is not an error.
//   - d == 0: nothing happens; expectations are untouched.
//
// The returned error is nil when everything succeeded. Otherwise it is the
// one failure of the call, or, when several calls failed, [errors.Join] of
// all of them in call order (creates: index order; deletes: rank order) —
// upstream returns one of them at random. An error is returned without any
// call or expectation change when owner is invalid (no Object, empty Key,
// negative Replicas), when pods must be created and the template is nil or
// has no labels, when a PodControl is needed and Pods is nil, and when ctx
// is already done.
//
// Beyond upstream: nil and duplicate (same [PodKey]) entries of active are
// ignored; victims whose controller ownerRef names another owner are not
// deleted (Outcome.NotOwned); the caller's slices and pods are never
// modified. ctx reaches every PodControl call. A panic in PodControl is
// re-raised in the caller's goroutine after every started call has
// returned and the expectations have been lowered for the failed calls,
// with its value unchanged; [Hooks.Panicked] receives the panicking
// goroutine's stack first.
func (m *Manager) ManageReplicas(ctx context.Context, owner Owner, active, related []*corev1.Pod) (Outcome, error) {
	return m.manage(ctx, owner, uniquePods(active), related)
}

// manageListed is the manage step of [Controller.Sync]. Its active pods are
// claimed from one listing of Config.Cluster.Pods, which repeats no pod but in a rare
// race (see [Pods]), so it skips ManageReplicas' check for repeats on every
// sync: that check made a sync of 1,000 pods with nothing to do 1.41x slower
// (CPU time of BenchmarkControllerSync with and without it, 12 interleaved
// rounds, 2-core machine, 2026-11-26). It checks where a repeat would do
// harm, before deleting: a pod counted twice would cost a live pod. Without
// the check a repeat can only make the step create fewer pods, never more.
func (m *Manager) manageListed(ctx context.Context, owner Owner, active, related []*corev1.Pod) (Outcome, error) {
	if len(active) > int(owner.Replicas) {
		active = uniquePods(active)
	}
	return m.manage(ctx, owner, active, related)
}

// manage is ManageReplicas for pods without nil or repeated entries.
func (m *Manager) manage(ctx context.Context, owner Owner, pods, related []*corev1.Pod) (Outcome, error) {
	if err := owner.validate(); err != nil {
		return Outcome{}, err
	}
	diff := len(pods) - int(owner.Replicas)
	out := Outcome{Diff: diff}
	if diff == 0 {
		return out, nil
	}
	if m.Pods == nil {
		return out, fmt.Errorf("reconcile: owner %s: Manager.Pods is nil", owner.Key)
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("reconcile: owner %s: %w", owner.Key, err)
	}
	if diff < 0 {
		return m.createPods(ctx, &owner, min(-diff, m.burst()), pods, out)
	}
	return m.deletePods(ctx, &owner, pods, related, min(diff, m.burst()), out)
}
