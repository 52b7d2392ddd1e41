package election

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// ErrLost is returned by [Run] when this replica lost the lease while it
// led: the process should exit non-zero at once, as kube-controller-manager
// does.
var ErrLost = errors.New("leader election lost")

// Fence builds the Lease lock for f, fenced (fencing.Lock), from a
// clientset of rc, and then wraps rc's transport with the fence: every
// client built from rc afterwards sends no mutating request (other than to
// the Lease) while the fence is closed. Call it before building the
// controller's clients, and give lock.Fence to reconcile.Config.Fence (or
// the example's Options.Fence). It sets f.Leases, when nil, to the lock's
// client (unfenced: it only reads), for [Flags.Run]'s watch.
func (f *Flags) Fence(rc *rest.Config) (*fencing.Lock, error) {
	leaseClient, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	inner, err := resourcelock.New(resourcelock.LeasesResourceLock, f.Namespace, f.Name,
		leaseClient.CoreV1(), leaseClient.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: f.Identity})
	if err != nil {
		return nil, err
	}
	lock, err := fencing.NewLock(inner, fencing.Options{LeaseDuration: f.LeaseDuration, RenewDeadline: f.RenewDeadline})
	if err != nil {
		return nil, err
	}
	if f.Leases == nil {
		f.Leases = leaseClient.CoordinationV1()
	}
	rc.Wrap(fencing.WrapTransport(lock.Fence))
	return lock, nil
}

// Run waits for the lease, then runs lead while this replica holds it, with
// client-go's elector (ReleaseOnCancel: the lease is released when ctx is
// done). It returns:
//   - lead's error, once lead has returned by itself (the lease is then
//     released);
//   - nil when ctx was done (SIGTERM) and lead has returned;
//   - an error wrapping [ErrLost] when the lease was lost while leading
//     (lead's context is cancelled and Run waits for lead to return; the
//     fence had already stopped its writes).
//
// Beyond upstream, while it waits and f.Leases is set, Run watches the Lease:
// when it sees it released (an empty holder, what a leader stopping with
// ReleaseOnCancel writes), it stops the waiting elector and starts a fresh
// one, which tries at once, instead of at its next retry (the retry period
// with client-go's jitter: 2 to 4.4 s with the default flags). The fresh
// elector acquires by client-go's own rules, on the same lock; an elector
// that has acquired the lease is never stopped, and a stopped one never
// acquires it. Leading, Run no longer watches. Without f.Leases, or when
// the watch fails (a Role without list and watch on leases), the standby
// takes over at its next retry, as upstream.
//
// It logs each transition (see the package doc). All goroutines it starts
// have ended when it returns.
func (f *Flags) Run(ctx context.Context, lock *fencing.Lock, lead func(ctx context.Context) error) error {
	lease := f.Namespace + "/" + f.Name
	logger := klog.FromContext(ctx).WithValues("lease", lease)
	electCtx, stop := context.WithCancel(ctx)
	defer stop()
	watchCtx, stopWatch := context.WithCancel(electCtx)
	var wg sync.WaitGroup
	defer wg.Wait() // after stopWatch (deferred below, so run first)
	defer stopWatch()
	released := make(chan struct{}, 1)
	if f.Leases != nil {
		wg.Go(func() { f.watchReleases(watchCtx, logger, released) })
	}
	var (
		led      = make(chan struct{}) // closed when lead has returned
		leadErr  error
		finished bool // lead returned by itself, before the lease ended
	)
	callbacks := leaderelection.LeaderCallbacks{
		OnStartedLeading: func(ctx context.Context) {
			defer close(led)
			stopWatch() // leading: a release seen now is our own
			logger.Info("leader election: became leader", "identity", f.Identity)
			leadErr = lead(ctx)
			finished = ctx.Err() == nil // not stopped by the elector or by our caller
			stop()                      // lead is done: release the lease
		},
		OnStoppedLeading: func() {},
		OnNewLeader: func(id string) {
			if id != f.Identity && id != "" {
				logger.Info("leader election: new leader observed", "leader", id)
			}
		},
	}
	logger.Info("leader election: waiting for the lease", "identity", f.Identity)
	won := false
	// Each turn starts a fresh elector; a turn ends with the lease acquired,
	// with ctx done, or after a release was seen, so the loop runs at most
	// once per release the watch reports.
	for !won && electCtx.Err() == nil {
		select {
		case <-released: // seen before this elector's first try, which reads the lease anyway
		default:
		}
		try := &attempt{Lock: lock}
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            try,
			LeaseDuration:   f.LeaseDuration,
			RenewDeadline:   f.RenewDeadline,
			RetryPeriod:     f.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            f.Name,
			WatchDog:        f.Health,
			Callbacks:       callbacks,
		})
		if err != nil {
			return err
		}
		if f.Health != nil {
			// NewLeaderElector, unlike RunOrDie, does not attach the
			// watchdog; each fresh elector replaces the last.
			f.Health.SetLeaderElection(elector)
		}
		tryCtx, cancelTry := context.WithCancel(electCtx)
		var turn sync.WaitGroup
		turn.Go(func() {
			select {
			case <-released:
				if try.retire() {
					logger.Info("leader election: lease released, trying now", "identity", f.Identity)
					cancelTry()
				}
			case <-tryCtx.Done():
			}
		})
		elector.Run(tryCtx)
		cancelTry()
		turn.Wait()
		won = try.won()
	}
	if !won {
		return nil // ctx ended while waiting: nothing was led
	}
	lost := electCtx.Err() == nil
	if lost {
		// Logged before waiting for lead, which stops its workers.
		logger.Info("leader election: lost the lease, exiting", "identity", f.Identity)
	}
	<-led // the elector has cancelled lead's context
	switch {
	case finished:
		logger.Info("leader election: released the lease", "identity", f.Identity)
		return leadErr
	case lost:
		return fmt.Errorf("%w: lease %s, identity %s", ErrLost, lease, f.Identity)
	}
	logger.Info("leader election: released the lease", "identity", f.Identity)
	if errors.Is(leadErr, context.Canceled) {
		return nil
	}
	return leadErr
}
