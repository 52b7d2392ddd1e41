// Package expectations tells a controller whether its informer cache has
// caught up with the creations and deletions the controller itself issued.
//
// A ReplicaSet-style controller counts pods in its cache and creates or
// deletes the difference. Its own writes reach the cache later, through watch
// events; a sync that ran in between would see the old pod count and act
// twice. The controller therefore records what it expects before it writes
// ([Tracker.ExpectCreations], [Tracker.ExpectDeletions]), its event handlers
// record what they observe ([Tracker.CreationObserved],
// [Tracker.DeletionObserved]), and a sync only acts on the cache when
// [Tracker.Satisfied] says so. This is upstream Kubernetes'
// ControllerExpectations and UIDTrackingControllerExpectations in one type,
// importable without k8s.io/kubernetes or client-go.
//
// The same Tracker is the consistency gate of Kubernetes v1.36+ (R-10.9,
// StaleControllerConsistencyReplicaSet, on by default in v1.37), for any
// controller and any resource: record each of the controller's own writes
// with [Tracker.Wrote], give Options.Caches the informers' synced versions,
// and start every sync with [Tracker.Ready], which returns a
// *[StaleCacheError] while a cache is older than the controller's newest
// write — read your own writes, instead of acting on a cache that does not
// show them yet:
//
//	t := expectations.New(expectations.Options{Caches: map[schema.GroupResource]func() string{
//		expectations.PodsResource: podInformer.GetStore().LastStoreSyncResourceVersion,
//	}})
//	// in the sync of key:
//	if err := t.Ready(key); err != nil {
//		return err // retried with rate limiting by the workqueue
//	}
//	created, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
//	if err == nil {
//		t.Wrote(key, owner.UID, expectations.PodsResource, created.ResourceVersion)
//	}
//
// Guarantees:
//   - Faithful: with zero Options every method behaves as docs/rules.md §2–§3
//     describe upstream, rule by rule. Satisfied is
//     true for a key without a record, for a fulfilled record (both counters
//     at most zero) and for a record strictly older than the TTL, measured
//     from the last Set or Expect call; Raise and Lower never refresh it.
//   - Exactly once: a pod key counts against an expected deletion at most
//     once, however often its deletion is observed; the key set of
//     ExpectDeletions is deduplicated and replaces the previous one.
//   - Deterministic: time comes from [Options.Clock] (nil: the real clock),
//     read outside every lock; [Clock] is satisfied by k8s.io/utils clocks.
//     Cache functions and hooks are also called with no lock held.
//   - Zero value: the zero [Tracker] is ready to use with the real clock and
//     [DefaultTTL].
//   - Bad input is stored, never rejected: negative counts are kept as given
//     (counters may go negative, as upstream), nil or empty pod key slices
//     yield an empty set, the empty string is an ordinary key. The caller's
//     slices are never kept or modified. No method panics.
//   - Concurrency: every method is safe for concurrent use. State is split
//     into 64 maps, each under its own mutex, chosen by a hash of the
//     controller key, so handlers and workers on different keys
//     rarely meet; no method holds more than one lock.
//   - Cost: [Tracker.CreationObserved], [Tracker.DeletionObserved],
//     [Tracker.CreationObservedKey] and [Tracker.Satisfied] allocate nothing
//     (with nil hooks, under every policy while resourceVersions parse); see
//     BenchmarkParallel for the throughput, and make bench-upstream for a
//     full round side by side with the real v1.37.2
//     UIDTrackingControllerExpectations (internal/conformance).
//   - Observability without logging: [Tracker.Check] returns the verdict
//     and its [Resolution], [Hooks] report each round's resolution with its
//     pending age, [Tracker.Snapshot] copies a key's state, and
//     [Snapshot.String] says in one line why a key is not satisfied.
//
// Beyond upstream, all opt-in (zero [Options] and the upstream entry points
// behave exactly as above):
//   - Exact creations: [Tracker.ExpectCreationKeys] expects creations by pod
//     key, for controllers that name their pods before creating them;
//     [Tracker.CreationObservedKey] counts each expected key once and
//     ignores any other, so duplicate or late add events and pods made by
//     someone else cannot satisfy the wrong round.
//   - Evidence instead of a blind timeout: [Tracker.Wrote] keeps the
//     highest resourceVersion of the controller's own pod writes in a round,
//     and Options.Caches[PodsResource] tells how far the pod informer has
//     synced. Under
//     [EvidenceFirst] a cache that has passed the writes but lacks their
//     events has missed them (resolve now, no 5-minute stall, Kubernetes
//     issue #129795), and a cache behind the writes keeps the key waiting
//     past the TTL (no over-creation), up to [Options.SafetyLimit]. A
//     round that expects something no cache will ever show (a create
//     refused for a terminating namespace) is marked with
//     [Tracker.RecordUnverifiable] and waits for the TTL, as upstream.
//     Versions are compared as apimachinery's
//     resourceversion.CompareResourceVersion (v0.35+) compares them.
//   - Named expiry policies: [ExpireAfterTTL] (upstream, the default),
//     [NeverExpire] and [EvidenceFirst], each documented with its failure
//     mode.
//
// Differences from upstream, all deliberate:
//   - The clock is injectable (upstream reads the wall clock, R-2.10).
//   - Upstream logs when ExpectDeletions replaces a non-empty key set
//     this package does not log. The replacement itself is the same.
//   - Upstream keeps counters and deletion key sets in two stores and can
//     hand out records that outlive Delete; here both live in one
//     record that never leaves the Tracker, with the same observable
//     behaviour.
package expectations
