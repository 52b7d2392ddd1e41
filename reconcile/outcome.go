package reconcile

import corev1 "k8s.io/api/core/v1"

// Outcome reports what one ManageReplicas call did, for logs, events and
// tests; the package itself does not log. Pods in it are the caller's
// pointers (victims) or the PodControl's returns (created pods); the slices
// are new and belong to the caller.
type Outcome struct {
	// Diff is the number of active pods (nil and duplicate entries of the
	// active slice not counted) minus the desired replicas: < 0 means pods
	// were missing, > 0 surplus. It is 0 when the call returned an error
	// before looking at the pods.
	Diff int
	// Expected is how many creations (Diff < 0) or deletions (Diff > 0)
	// the call asked for: |Diff| capped at the burst. For deletions it
	// counts every chosen victim, including NotOwned ones.
	Expected int

	// Created holds the pods CreatePod returned (or, when it returned a
	// nil pod without error, the pod that was sent), in call order.
	Created []*corev1.Pod
	// NamespaceTerminating counts creates that failed because the
	// namespace is being deleted. As upstream, they count as
	// successes: no error, the batch continues, expectations not lowered.
	NamespaceTerminating int
	// CreateFailed counts creates that failed otherwise; each was lowered
	// in the expectations.
	CreateFailed int
	// Skipped counts creates never attempted because a batch failed (or
	// ctx ended between batches); each was lowered in the expectations.
	// Upstream's "skipped" is CreateFailed + Skipped.
	Skipped int
	// Fenced counts the creates or deletes not made because Manager.Fence
	// refused a write; each was lowered in the expectations. For creates
	// it is every create not attempted after the refusal, in the refused
	// batch and the later ones (they are also counted in Skipped); for
	// deletes, the victims whose delete was refused (in neither Deleted,
	// Gone nor DeleteFailed). Always 0 without a fence.
	Fenced int
	// Batches lists the sizes of the slow-start batches that ran, in order.
	Batches []int
	// Names holds the names of the new pods when TrackCreations is on
	// (Expected of them, in call order), nil otherwise. The first Retried
	// of them are names of earlier failed creates, tried again.
	Names []string
	// Retried is how many of Names are retried names (the first ones).
	Retried int
	// NotSelected are the pods CreatePod returned with labels the owner's
	// Selector does not match (a label the pod client stamps that the
	// selector excludes, a mutating webhook rewriting labels), as
	// returned. Beyond upstream: each was deleted at once and
	// lowered in the expectations, the round stopped there, and the call's
	// error is terminal (errors.Is(err, ErrCreationsStopped)). Empty when
	// Owner.Selector is nil, invalid or empty: nothing is checked then.
	NotSelected []*corev1.Pod
	// AlreadyExisted counts retried creates that met AlreadyExists: the
	// earlier create had succeeded after all. They count as successes (no
	// error, key still expected, not in Created).
	AlreadyExisted int

	// Victims are the pods chosen for deletion, in deletion-rank order
	// (most deletable first; input order when every active pod goes).
	Victims []*corev1.Pod
	// NotOwned are the victims that were not deleted because their
	// controller ownerRef names another object (a different UID) — a safety
	// check beyond upstream, which deletes what it is given. They are not
	// expected. Orphans (no controller ownerRef) are not refused: the
	// caller passed them as the owner's pods, as upstream's claiming does.
	NotOwned []*corev1.Pod
	// Deleted are the victims whose DeletePod succeeded.
	Deleted []*corev1.Pod
	// Gone are the victims whose DeletePod returned NotFound: already gone,
	// lowered in the expectations, not an error.
	Gone []*corev1.Pod
	// DeleteFailed are the victims whose DeletePod failed otherwise; each
	// was lowered in the expectations through its pod key.
	DeleteFailed []*corev1.Pod
}
