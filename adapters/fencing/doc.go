// Package fencing answers "may this replica still write?" from client-go's
// leader election, for reconcile.Config.Fence (and Manager.Fence), and
// refuses a fenced replica's writes where they leave the process.
//
// A leader that is paused (a long GC pause, a frozen VM, SIGSTOP) keeps the
// work it had queued, and on resume sends it before its elector's renew loop
// notices that another replica took the lease. client-go's elector cannot
// close that window; a fence can, because it asks the clock before each
// write:
//
//   - [Lock] wraps the resourcelock.Interface the elector uses (client-go's
//     leaderelection.LeaderElectionConfig.Lock, controller-runtime's
//     manager.Options.LeaderElectionResourceLockInterface) and records, on
//     the monotonic clock, the start of the last successful Create or
//     Update of the lease in this replica's name. [Lock.Fence] refuses once
//     RenewDeadline has passed since that start, before the first
//     acquisition, as soon as a read shows another holder, and from the
//     release on.
//   - [WrapTransport] refuses mutating requests (POST, PUT, PATCH, DELETE)
//     while the fence refuses, except those to coordination.k8s.io (the
//     lease) and the creates of reviews (TokenReview, SubjectAccessReview
//     and their kin), which store nothing: it catches the writes already
//     past the library's check, such as those waiting in client-go's rate
//     limiter when the process was paused. [WrapConfig] returns a fenced
//     copy of a rest.Config instead.
//
// Wrapping the manager's whole rest.Config fences every client built from
// it, on every replica: the controller's writes and its events, and also
// the writes of anything else the process runs, even what runs on a
// standby (a webhook server rotating its certificate). Leases, reviews
// (the secure metrics endpoint's authentication and authorization) and
// reads pass. To fence the controller alone, build its clients from
// [WrapConfig]'s copy and leave the manager's config unfenced.
//
// Why it is safe: another replica takes the lease only once it has seen the
// same record unchanged for the record's lease duration on its own clock,
// and it can first see the record only after the renewal request started.
// So no other replica leads before start + lease duration, and the fence
// closes earlier, at start + RenewDeadline; the difference (lease duration −
// renew deadline, 5 s with kube-controller-manager's defaults) absorbs clock
// rate differences and the time between a check and the request reaching
// the API server. Nothing in this package can stop a request already on the
// wire.
package fencing
