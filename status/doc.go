// Package status computes what a replica controller publishes after a sync
// and whether that needs an API write: the replica counts, the
// ReplicaFailure condition and the availability requeue, for apps/v1
// ReplicaSets ([Calculate], [NeedsUpdate], [ForWrite]) and for any custom
// resource ([Count], [SetReplicaFailure], [RequeueAfter]).
//
// The one thing to know: these are pure functions of their inputs and a
// `now` argument. None reads the clock or writes into the ReplicaSet, its
// pods or a condition slice; [ForWrite] returns the status to write.
//
// Zero [Options] follow upstream v1.37 (rules
// and of the repository's docs/rules.md); docs/design/status.md has
// the longer notes and the deliberate differences.
package status
