package election

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

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
// the example's Options.Fence).
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
	rc.Wrap(fencing.WrapTransport(lock.Fence))
	return lock, nil
}

// Run waits for the lease, then runs lead while this replica holds it, with
// client-go's elector (ReleaseOnCancel: the lease is released when ctx is
// done, so that another replica takes over in about a retry period). It
// returns:
//   - lead's error, once lead has returned by itself (the lease is then
//     released);
//   - nil when ctx was done (SIGTERM) and lead has returned;
//   - an error wrapping [ErrLost] when the lease was lost while leading
//     (lead's context is cancelled and Run waits for lead to return; the
//     fence had already stopped its writes).
//
// It logs each transition (see the package doc).
func (f *Flags) Run(ctx context.Context, lock *fencing.Lock, lead func(ctx context.Context) error) error {
	lease := f.Namespace + "/" + f.Name
	logger := klog.FromContext(ctx).WithValues("lease", lease)
	electCtx, stop := context.WithCancel(ctx)
	defer stop()
	watched := &acquiredLock{Lock: lock}
	var (
		led      = make(chan struct{}) // closed when lead has returned
		leadErr  error
		finished bool // lead returned by itself, before the lease ended
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            watched,
		LeaseDuration:   f.LeaseDuration,
		RenewDeadline:   f.RenewDeadline,
		RetryPeriod:     f.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            f.Name,
		WatchDog:        f.Health,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				defer close(led)
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
		},
	})
	if err != nil {
		return err
	}
	if f.Health != nil {
		// NewLeaderElector, unlike RunOrDie, does not attach the watchdog.
		f.Health.SetLeaderElection(elector)
	}
	logger.Info("leader election: waiting for the lease", "identity", f.Identity)
	elector.Run(electCtx)
	if !watched.acquired.Load() {
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

// acquiredLock notes whether the elector ever acquired the lease: a
// successful Create or Update in this replica's name, exactly what makes
// client-go's elector start leading.
type acquiredLock struct {
	*fencing.Lock
	acquired atomic.Bool
}

func (a *acquiredLock) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	err := a.Lock.Create(ctx, rec)
	a.note(err, rec)
	return err
}

func (a *acquiredLock) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	err := a.Lock.Update(ctx, rec)
	a.note(err, rec)
	return err
}

func (a *acquiredLock) note(err error, rec resourcelock.LeaderElectionRecord) {
	if err == nil && rec.HolderIdentity == a.Identity() {
		a.acquired.Store(true)
	}
}
