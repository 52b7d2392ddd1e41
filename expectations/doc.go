// Package expectations tells a controller whether its informer cache has
// caught up with the creations and deletions the controller itself issued:
// upstream Kubernetes' ControllerExpectations and
// UIDTrackingControllerExpectations in one [Tracker], without
// k8s.io/kubernetes or client-go.
//
// The one thing to know: record what a sync is about to write
// ([Tracker.ExpectCreations], [Tracker.ExpectDeletions]), record in the event
// handlers what the cache shows ([Tracker.CreationObserved],
// [Tracker.DeletionObserved]), and act on the cache only while
// [Tracker.Satisfied] is true. An expectation never observed holds its key
// until [Options].Policy lets it go: after the TTL ([DefaultTTL] unless
// [Options].TTL says otherwise), or, under the opt-in [EvidenceFirst], as
// soon as the cache's resourceVersion shows the event was missed, reading
// the controller's pod writes from a [Gate].
//
// The [Gate] is the consistency gate (read-your-own-writes, upstream's
// ConsistencyStore): record the controller's writes with [Gate.Wrote] and
// ask [Gate.Ready] first in every sync. Its records live apart from the
// expectation rounds; [Options].Gate connects the two.
//
// Which type: a Tracker works in rounds, as upstream's controllers do — a
// sync states everything it is about to write for a key at once, and the
// next sync's Expect call replaces it. An operator that records pods one
// at a time, waits for creations and deletions under one key at once (one
// key per pod group of an owner), checks them against a cache or a client
// instead of events, or times creations and deletions apart, uses the
// per-pod tracker of package
// github.com/reconcilekit/reconcilekit/expectations/perpod instead. The two
// share [Clock] and [Hooks]; a key lives in one of them, so it cannot
// change mode.
//
// The zero Tracker and the zero Gate are ready to use and safe for
// concurrent use. Zero [Options] follow upstream v1.37, rules R-2.x, R-3.x
// and of the repository's docs/rules.md; docs/design/expectations.md
// has the longer notes and the measurements.
package expectations
