package fencing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// ErrNotLeader marks every refusal of [Lock.Fence]: this replica may not
// hold the lease. Test with errors.Is.
var ErrNotLeader = errors.New("fencing: this replica may not hold the lease")

// Options configure a [Lock].
type Options struct {
	// LeaseDuration is the elector's lease duration
	// (leaderelection.LeaderElectionConfig.LeaseDuration, 15 s in
	// kube-controller-manager). Required, > 0.
	LeaseDuration time.Duration
	// RenewDeadline is how long after the start of the last successful
	// renewal the fence stays open: the elector's renew deadline
	// (LeaderElectionConfig.RenewDeadline, 10 s in kube-controller-manager),
	// so the fence closes no later than the elector itself gives up
	// leading. Required, 0 < RenewDeadline < LeaseDuration; the margin
	// LeaseDuration − RenewDeadline is the safety against clock rate
	// differences and request latency.
	RenewDeadline time.Duration
	// Clock is read, once per question and per renewal, for monotonic
	// time. Nil: the real clock.
	Clock clock.PassiveClock
}

// Lock is a resourcelock.Interface that also answers, through
// [Lock.Fence], whether this replica may still write. Give it to the
// elector in place of the lock it wraps; give lock.Fence to
// reconcile.Config.Fence and to [WrapTransport].
//
// Build it with [NewLock]; the zero Lock is not usable. A Lock is safe for
// concurrent use: the elector calls the lock methods from its goroutine
// while any number of workers call Fence.
type Lock struct {
	inner  resourcelock.Interface
	opts   Options
	margin time.Duration

	mu      sync.Mutex
	held    bool          // a Create or Update in our name succeeded, and nothing since says otherwise
	renewed time.Time     // start of the last successful Create or Update in our name
	window  time.Duration // how long after renewed the fence is open
	why     string        // why held is false, for the refusal
}

var _ resourcelock.Interface = (*Lock)(nil)

// NewLock wraps inner, the lock the elector would otherwise use. It
// returns an error for a nil inner, a non-positive LeaseDuration or a
// RenewDeadline outside (0, LeaseDuration). The fence starts closed: it
// opens at the first successful acquisition.
func NewLock(inner resourcelock.Interface, opts Options) (*Lock, error) {
	switch {
	case inner == nil:
		return nil, errors.New("fencing: NewLock: nil lock")
	case opts.LeaseDuration <= 0:
		return nil, fmt.Errorf("fencing: NewLock: LeaseDuration %v must be > 0", opts.LeaseDuration)
	case opts.RenewDeadline <= 0 || opts.RenewDeadline >= opts.LeaseDuration:
		return nil, fmt.Errorf("fencing: NewLock: RenewDeadline %v must lie in (0, LeaseDuration %v)", opts.RenewDeadline, opts.LeaseDuration)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Lock{
		inner:  inner,
		opts:   opts,
		margin: opts.LeaseDuration - opts.RenewDeadline,
		why:    "not acquired yet",
	}, nil
}

// Fence returns nil while this replica may write: it has acquired the lease
// and the last successful renewal started less than RenewDeadline ago (or
// less than the record's lease duration minus the margin, if the record
// says less). Otherwise it returns an error wrapping [ErrNotLeader] that
// says why. It reads the clock once. Its method value is a
// reconcile.Config.Fence.
func (l *Lock) Fence() error {
	now := l.opts.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return fmt.Errorf("%w: lease %s, identity %s: %s", ErrNotLeader, l.inner.Describe(), l.inner.Identity(), l.why)
	}
	if since := now.Sub(l.renewed); since >= l.window {
		return fmt.Errorf("%w: lease %s, identity %s: the last successful renewal started %v ago; writes stop %v after it",
			ErrNotLeader, l.inner.Describe(), l.inner.Identity(), since.Round(time.Millisecond), l.window)
	}
	return nil
}

// MayWrite reports whether [Lock.Fence] returns nil.
func (l *Lock) MayWrite() bool { return l.Fence() == nil }

// Get reads the lease through the wrapped lock. A record held by another
// identity closes the fence at once.
func (l *Lock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.inner.Get(ctx)
	if err == nil && rec != nil && rec.HolderIdentity != l.inner.Identity() {
		l.close(fmt.Sprintf("the lease is held by %q", rec.HolderIdentity))
	}
	return rec, raw, err
}

// Create creates the lease through the wrapped lock; see [Lock.Update].
func (l *Lock) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, rec, l.inner.Create)
}

// Update writes the lease through the wrapped lock. A record in this
// replica's name that is written successfully opens the fence from the
// moment the call started; any other record (a release: no holder, or
// another one) closes it before the call.
func (l *Lock) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, rec, l.inner.Update)
}

func (l *Lock) write(ctx context.Context, rec resourcelock.LeaderElectionRecord, fn func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	if rec.HolderIdentity != l.inner.Identity() {
		l.close(fmt.Sprintf("the lease was released (holder %q written)", rec.HolderIdentity))
		return fn(ctx, rec)
	}
	// The start, not the end: another replica can first see this record
	// only after the request left, so it waits a lease duration from a
	// later instant than this one.
	start := l.opts.Clock.Now()
	if err := fn(ctx, rec); err != nil {
		return err
	}
	window := l.opts.RenewDeadline
	if d := time.Duration(rec.LeaseDurationSeconds)*time.Second - l.margin; d < window {
		window = d // a record that promises a shorter lease than configured
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held || start.After(l.renewed) {
		l.renewed = start
		l.window = window
	}
	l.held = true
	return nil
}

// close marks the lease as not held, with the reason.
func (l *Lock) close(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
	l.why = why
}

// RecordEvent passes the event to the wrapped lock.
func (l *Lock) RecordEvent(s string) { l.inner.RecordEvent(s) }

// Identity returns the wrapped lock's identity.
func (l *Lock) Identity() string { return l.inner.Identity() }

// Describe returns the wrapped lock's description (namespace/name).
func (l *Lock) Describe() string { return l.inner.Describe() }
