// Package perpod is an operator's scale expectations: per key (an owner,
// or one pod group of an owner), the pods whose creation or deletion the
// controller expects and has not yet seen, recorded one pod at a time.
//
// Where package expectations' Tracker follows upstream's controllers, which
// state a whole round of writes at once, a perpod [Tracker] serves the
// operators that name each pod as they create or delete it (KubeRay's
// scale expectations, for one): it waits for creations and deletions under
// one key at once, settles each only by its own pod key, checks the pods
// against a cache or a client ([Tracker.Observe]) as well as through events
// ([PodKeys] and the adapters' TrackPods), and times creations and
// deletions apart ([Options]).
//
//   - One answer to "when does an expected pod stop blocking": observed,
//     or older than its kind's expiry ([Options].CreationExpiry,
//     [Options].DeletionExpiry; zero means expectations.DefaultTTL, and
//     [Never] waits for good).
//   - Nothing is counted: a duplicate or late event, or a pod made by
//     someone else, settles nothing it was not expected for.
//   - The zero Tracker is ready to use and safe for concurrent use; time
//     comes from [Options].Clock; nothing logs (expectations.Hooks).
//
// docs/design/pod-keys.md has the rules in full.
package perpod
