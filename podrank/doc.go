// Package podrank decides which pods a ReplicaSet-style controller deletes
// first when it scales down, in exactly upstream Kubernetes' order
// (ActivePodsWithRanks): [Compare] is upstream's Less, [ForDeletion] is
// getPodsToDelete, and [RanksByNode] gives the co-location ranks.
//
// The one thing to know: time comes from [Options].Now, and the zero
// Options is not kube-controller-manager's order. With no Now, ready and
// creation times are compared exactly, as upstream's comparison does with
// a zero time; kube-controller-manager always passes the wall clock, so its
// order buckets them logarithmically. For its exact order pass the current
// time, Options{Now: time.Now()} (or a Clock's reading), as
// reconcile.Manager does from its Clock. Nothing is modified: ForDeletion
// returns a new slice and never reorders its input. A list's []corev1.Pod
// goes in through [Pointers], which copies no pod.
//
// This package is also the one public place for the pod-state predicates a
// controller filters with: [IsActive], [IsTerminating], [FilterActive] and
// [FilterTerminating] are implemented here, not
// re-exported; package reconcile claims with them. Readiness and
// availability are not exported: package status counts them
// (status.Count).
//
// Every function is safe for concurrent use on unmodified pods. The rules
// are .x and R-7.x of the repository's
// docs/rules.md; docs/design/podrank.md has the longer notes and
// BENCHMARKS.md the speed.
package podrank
