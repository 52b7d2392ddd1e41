// Package podrank decides which pods a ReplicaSet-style controller deletes
// first when it scales down, in exactly upstream Kubernetes' order
// (ActivePodsWithRanks), without upstream's defects and many times faster.
//
// Scaling down must pick victims the way kube-controller-manager does:
// unscheduled pods first, then by phase, readiness, the pod-deletion-cost
// annotation, co-location with related pods, logarithmic ready-time
// buckets with a UID tie-break, restart counts (including native
// sidecars) and creation-time buckets. Copies of that order usually get
// one of its edges wrong; upstream itself re-parses the annotation and
// rescans the pod on every comparison and sorts the caller's slice in
// place.
//
// Guarantees:
//   - [Compare] reproduces upstream's Less exactly, every step and edge:
//     Compare(a, b) < 0 iff Less(a, b), > 0 iff Less(b, a). The zero
//     [Options] is upstream's default order; a zero Options.Now disables
//     the logarithmic buckets, as upstream does with a zero Now.
//   - [ForDeletion] returns the pods upstream's getPodsToDelete would
//     return, in deletion order, with ranks from [RanksByNode]; pods tied
//     under Compare may come in any order, as with upstream's unstable sort.
//   - Nothing is modified: not the pods, not the slices (upstream sorts the
//     caller's slice in place). Results never alias the inputs.
//   - No wall clock: time comes from Options.Now.
//   - Nil pods and malformed annotations never panic: nil pods are skipped
//     (or ordered first by Compare), a malformed cost counts as 0
//     ([ParseDeletionCost] reports why).
//   - Speed: each pod is read at most once, and only as far as needed,
//     into a key of plain fields; ForDeletion keeps at most 2n keys and
//     sorts only the n it returns. BENCHMARKS.md has the measured figures,
//     side by side with the real v1.37.2 getPodsToDelete.
//   - Every function is safe for concurrent use on shared, unmodified pods.
//
// Rules implemented (docs/rules.md): R-1.6 (the annotation key), R-5.1–R-5.3 ([IsActive],
// [IsTerminating], [FilterActive], [FilterTerminating]), R-6.1–
// ([Compare], [ParseDeletionCost], [DeletionCost]), R-7.1 ([RanksByNode]) and
// R-7.3 ([ForDeletion]). R-7.2 (finding the related pods) is the caller's:
// pass them as related, or nil for a bare ReplicaSet.
//
// Deliberate differences from upstream:
//   - ForDeletion never reorders its input and returns a new slice.
//   - Options.Now replaces the wall-clock reading upstream takes when it
//     ranks; pass the current time to get upstream's behaviour.
//   - The metrics-only deletion-age ratio of, which can divide by
//     zero upstream, is not computed.
//   - Compare orders a nil pod first instead of panicking.
//   - Like upstream, the order is not a strict weak ordering.
//     Where it is one on the given pods, ForDeletion returns a prefix of
//     the sorted order; where it is not, upstream's answer depends on its
//     sort's pivots, and ForDeletion returns n distinct pods chosen by the
//     same comparisons.
package podrank
