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
//   - Faithful: zero [Options] behave as upstream, rule by rule (R-2.x and
//     R-3.x in docs/rules.md), including the 5-minute TTL measured from the
//     last Set or Expect call.
//   - Exactly once: a pod key counts against an expected deletion at most
//     once, however often its deletion is observed.
//   - Safe for concurrent use; time comes from [Options.Clock] (nil: real
//     time); no lock is held while a clock, cache function or hook runs.
//     The zero [Tracker] is ready to use.
//   - Bad input is stored, never rejected, and never panics; the caller's
//     slices are never kept or modified.
//   - The observation methods and [Tracker.Satisfied] allocate nothing;
//     BenchmarkParallel and make bench-upstream measure them.
//   - No logging: [Tracker.Check], [Hooks], [Tracker.Snapshot] and
//     [Snapshot.String] say why a key is or is not satisfied.
//
// Beyond upstream, all opt-in:
//   - Exact creations by pod key ([Tracker.ExpectCreationKeys],
//     [Tracker.CreationObservedKey]): late or duplicate add events and pods
//     made by someone else cannot satisfy the wrong round.
//   - Evidence instead of a blind timeout ([EvidenceFirst]): a pod cache
//     that has passed the controller's own writes but lacks their events
//     has missed them, and resolves at once (Kubernetes issue #129795); a
//     cache behind the writes keeps the key waiting past the TTL, up to
//     [Options.SafetyLimit], instead of over-creating.
//
// Deliberate differences: the clock is injectable (upstream reads the wall
// clock); nothing logs; counters and deletion keys share one record that
// never leaves the Tracker, so no record outlives [Tracker.Delete].
package expectations
