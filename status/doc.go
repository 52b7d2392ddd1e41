// Package status computes what a replica controller publishes after a sync
// and decides whether that needs an API write: the replica counts, the
// ReplicaFailure condition, the observed generation and the requeue that lets
// a ready pod be counted as available once minReadySeconds have passed.
//
// Upstream Kubernetes does this only for apps/v1 ReplicaSets, stamps the
// condition with the wall clock and writes into the object it is given. This
// package offers the same rules as pure functions of their inputs and a `now`
// argument, for apps/v1 ([Calculate], [NeedsUpdate], [ForWrite]) and for any
// custom resource ([Count], [SetReplicaFailure], [RequeueAfter]).
//
// Guarantees:
//   - Faithful by default: with a zero [Options] the result equals upstream
//     Kubernetes v1.37, except for
//     the deviations listed below.
//   - Deterministic: no function reads the clock. Time comes from `now` (and
//     `later` in [RequeueAfter]).
//   - Never mutates input: the ReplicaSet, its status, the pod slices, the pods
//     and a caller's condition slice are only read. Every returned status or
//     condition slice shares no memory with the input.
//   - Allocation-free counting: [Calculate] and [Count] do not allocate per
//     pod (BenchmarkCalculate: the allocation count is the same for 100 and
//     for 10,000 pods).
//   - Odd input is not an error: a nil ReplicaSet is treated as an empty one,
//     a nil Spec.Replicas as 1 (the API default), nil pods in a slice are
//     skipped, and a negative minReadySeconds is compared arithmetically as
//     upstream does. Nothing panics.
//   - Pure functions over values: everything here is safe for concurrent use
//     as long as callers do not modify the inputs meanwhile.
//
// Rules implemented (docs/rules.md):
//   - readiness and availability (through internal/podutil).
//   - [Calculate] and [Count].
//   - for custom resources: [SetReplicaFailure].
//   - [NeedsUpdate]: [ForWrite].
//   - [NextAvailabilityCheck] and [RequeueAfter].
//   - the [ReplicaFailure], [FailedCreate] and [FailedDelete] names.
//
// Deliberate deviations from upstream:
//   - A new ReplicaFailure condition's LastTransitionTime is the `now`
//     argument, not a wall-clock reading (R-8.4 uses the wall clock).
//   - Nothing writes into its input: [ForWrite] returns the status to write
//     instead of assigning it into the ReplicaSet (R-8.7 mutates the object).
//   - [SetReplicaFailure] uses the reason [ReconcileError] where upstream
//     leaves the reason empty (the counts already match), because a
//     metav1.Condition must have a non-empty reason. [Calculate] keeps "".
//
// What the package does not do: list, filter or claim pods (callers pass the
// active and terminating pods, e.g. from podrank.FilterActive and
// podrank.FilterTerminating after claiming, R-10.5) or talk to an API server.
package status
