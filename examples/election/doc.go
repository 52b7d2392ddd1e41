// Package election is the examples' leader election: kube-controller-manager's
// flags and defaults, a lease lock fenced with the adapters' fencing package,
// and a runner that leads, releases the lease on cancel and reports a lost
// lease as an error, so that the process exits non-zero at once.
//
// A controller built on it writes nothing while it may not hold the lease:
// the fence is asked before each of the library's writes (reconcile.Config.Fence)
// and again by the rest.Config's transport, after client-go's rate limiter
// (fencing.WrapTransport).
//
// A standby takes over as soon as it sees a release, not at its next
// retry: while it waits, [Flags.Run] watches the Lease (a watch on its name
// through [Flags.Leases]) and, when the leader releases it on SIGTERM, starts
// a fresh elector at once on the same lock. The flags and their defaults are
// unchanged (lease 15 s, renew 10 s, retry 2 s); acquisition follows
// client-go's rules; a replica that leads is never restarted. The watch
// needs list and watch on the Lease's name; without them the standby tries
// every retry period, as upstream.
//
// Leadership transitions are logged through klog at the default level:
//
//	"leader election: waiting for the lease" lease="kube-system/reconcilekit-replicaset" identity="…"
//	"leader election: became leader" lease="…" identity="…"
//	"leader election: new leader observed" lease="…" leader="…"
//	"leader election: lease released, trying now" lease="…" identity="…"
//	"leader election: released the lease" lease="…" identity="…"
//	"leader election: lost the lease, exiting" lease="…" identity="…"
package election
