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
// until the TTL ([DefaultTTL] unless [Options].TTL says otherwise) expires;
// the opt-in [EvidenceFirst] policy decides from the cache's resourceVersion
// instead, reading the controller's pod writes from a [Gate].
//
// The [Gate] is the consistency gate (read-your-own-writes, upstream's
// ConsistencyStore): record the controller's writes with [Gate.Wrote] and
// ask [Gate.Ready] first in every sync. Its records live apart from the
// expectation rounds; [Options].Gate connects the two.
//
// A controller that records one pod at a time, or waits for creations and
// deletions under one key at once (one key per pod group of an owner), adds
// pod keys with [Tracker.AddCreationKey] and [Tracker.AddDeletionKey], reads
// them with [Tracker.PendingKeys], checks them against a cache or a client
// with [Tracker.Observe], times creations and deletions apart
// ([Options].CreationExpiry, [Options].DeletionExpiry), and lists or
// forgets an owner's keys with [Tracker.KeysWithPrefix] and
// [Tracker.DeletePrefix].
//
// The zero Tracker and the zero Gate are ready to use and safe for
// concurrent use. Zero
// [Options] follow upstream v1.37, rules R-2.x, R-3.x and of the
// repository's docs/rules.md; docs/design/expectations.md has the longer
// notes.
package expectations
