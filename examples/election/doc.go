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
// Leadership transitions are logged through klog at the default level:
//
//	"leader election: waiting for the lease" lease="kube-system/reconcilekit-replicaset" identity="…"
//	"leader election: became leader" lease="…" identity="…"
//	"leader election: new leader observed" lease="…" leader="…"
//	"leader election: released the lease" lease="…" identity="…"
//	"leader election: lost the lease, exiting" lease="…" identity="…"
package election
