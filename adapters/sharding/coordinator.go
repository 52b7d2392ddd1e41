package sharding

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Options configure a [Coordinator]. Namespace, Name and Identity are
// required; the zero value of every other field is a documented default.
type Options struct {
	// Namespace holds the group's Leases.
	Namespace string
	// Name names the group: every replica of one controller uses the same
	// Name. It is the value of [GroupLabel] and the prefix of the Leases'
	// names (Name-shard-I-of-K, Name-replica-HASH): a lowercase label value.
	Name string
	// Identity names this replica in the Leases' holderIdentity: unique
	// among the replicas (the pod name, or host name and a UUID, as for
	// leader election).
	Identity string
	// Shards is the number of shards K, 1 to [Buckets]; 0 means
	// [DefaultShards]. More shards than replicas spread the work more
	// evenly; each held shard runs its own caches and workers. Every replica
	// of a group must use the same K: a replica holds no shard while a
	// shard of another K is held (a change of K waits for the last replica
	// with the old K to give its shards back, or for their Leases to expire).
	Shards int
	// LeaseDuration is how long a replica waits, after it last saw a
	// shard's or a replica's Lease change, before it takes the shard or
	// counts the replica gone; 0 means 15 s (kube-controller-manager's).
	LeaseDuration time.Duration
	// RenewDeadline is how long after the start of a shard's last
	// successful renewal the shard's fence stays open; 0 means 10 s. It must
	// be below LeaseDuration: the difference absorbs clock rate differences
	// and request latency.
	RenewDeadline time.Duration
	// RetryPeriod is how often a replica renews its Leases and looks for
	// shards to take when nothing changed; 0 means 2 s. A Lease's change
	// (a release, a new replica) is acted on when its watch event arrives.
	RetryPeriod time.Duration
	// Clock is the time source; nil means the real clock.
	Clock clock.Clock
}

func (o Options) withDefaults() (Options, error) {
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = 10 * time.Second
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = 2 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	switch {
	case o.Namespace == "":
		return o, errors.New("sharding: Options.Namespace is required")
	case o.Identity == "":
		return o, errors.New("sharding: Options.Identity is required")
	case o.LeaseDuration < 0 || o.RenewDeadline < 0 || o.RetryPeriod < 0:
		return o, fmt.Errorf("sharding: negative durations: LeaseDuration %v, RenewDeadline %v, RetryPeriod %v", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	case o.RenewDeadline >= o.LeaseDuration:
		return o, fmt.Errorf("sharding: RenewDeadline %v must be below LeaseDuration %v", o.RenewDeadline, o.LeaseDuration)
	case o.RetryPeriod >= o.RenewDeadline:
		return o, fmt.Errorf("sharding: RetryPeriod %v must be below RenewDeadline %v", o.RetryPeriod, o.RenewDeadline)
	case o.LeaseDuration%time.Second != 0:
		return o, fmt.Errorf("sharding: LeaseDuration %v must be whole seconds (a Lease stores seconds)", o.LeaseDuration)
	}
	if err := validCount(o.Shards); err != nil {
		return o, err
	}
	if err := validGroup(o.Name); err != nil {
		return o, err
	}
	return o, nil
}

// RunFunc runs the controller of one held shard until ctx is done, then
// returns once its workers have stopped: every write it started has
// returned, so the replica can give the shard back with nothing in flight.
// It must write only through clients fenced with h.Fence (reconcile.Config.Fence,
// fencing.WrapConfig) and record its writes with h.Wrote ([WrapCluster]
// does both for a Controller's Cluster). A return before ctx is done
// (an error, or nil) gives the shard back.
type RunFunc func(ctx context.Context, h *Held) error

// Coordinator spreads a controller's K shards over the replicas that run
// it: a Lease per shard, held by at most one replica, and a Lease per
// replica, counting the replicas. Each replica holds at most ceil(K/N) of
// the shards when N replicas run: it takes a free shard at once (a shard
// whose Lease is missing, given back, or unchanged for its lease duration),
// gives shards back when a replica joins and it holds more than its share,
// and gives every shard back when it stops. For each shard it holds it runs
// a [RunFunc] with the shard's [Held], whose Fence closes RenewDeadline
// after the last successful renewal of the shard's Lease, and which carries
// the previous holder's last write into the next holder's first sync.
//
// Build it with [NewCoordinator] and call Run once. A Coordinator is safe
// for concurrent use: [Coordinator.Shards] may be called from any goroutine.
type Coordinator struct {
	opts    Options
	store   store
	wake    chan struct{}
	replica string // this replica's Lease

	mu       sync.Mutex
	seen     map[string]sighting // every Lease of the group seen, by name
	held     map[int]*holding    // by shard index
	replicaL *coordinationv1.Lease
	renewed  time.Time // start of the last successful write of this replica's Lease

	// refrain: take nothing before then. A shard given straight back after
	// its take (a shard of another K held, or the check unanswered) waits a
	// RetryPeriod, rather than being taken again at the next watch event
	// (which its own give-back causes). Only Run's loop uses it.
	refrain time.Time
}

// sighting is when this replica saw a Lease's version first.
type sighting struct {
	rv string
	at time.Time
}

// holding is a shard this replica holds, and its controller.
type holding struct {
	h         *Held
	lease     *coordinationv1.Lease // as the API server last answered us
	renewing  time.Time             // start of the last successful write of lease
	cancel    context.CancelFunc
	done      chan struct{} // closed when the RunFunc returned
	releasing time.Time     // when this replica decided to give it back; zero while it keeps it
	fenced    time.Time     // when a release that could not wait for the RunFunc closed the fence
	err       error         // the RunFunc's
}

// NewCoordinator returns the Coordinator of opts over client's Leases (it
// needs get, list, watch, create, update and delete on leases in
// opts.Namespace). It starts nothing.
//
// Give it a client of its own, not one whose rate limiter the shards'
// controllers share (rest.Config.RateLimiter): a renewal queued behind a
// burst of pod writes starts late, and every fence of the replica closes
// RenewDeadline after the last renewal that started on time. The
// Coordinator logs a renewal that came after its fence had closed.
func NewCoordinator(client kubernetes.Interface, opts Options) (*Coordinator, error) {
	if client == nil {
		return nil, errors.New("sharding: NewCoordinator: nil client")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := newCoordinator(nil, opts)
	s, err := newAPIStore(client, opts.Namespace, opts.Name, c.poke)
	if err != nil {
		return nil, err
	}
	c.store = s
	return c, nil
}

func newCoordinator(s store, opts Options) *Coordinator {
	return &Coordinator{
		opts:    opts,
		store:   s,
		wake:    make(chan struct{}, 1),
		replica: replicaLeaseName(opts.Name, opts.Identity),
		seen:    map[string]sighting{},
		held:    map[int]*holding{},
	}
}

// poke wakes Run's loop.
func (c *Coordinator) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Shards returns the shards this replica holds and keeps (not those it is
// giving back), in index order.
func (c *Coordinator) Shards() []Shard {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Shard
	for _, i := range slices.Sorted(maps.Keys(c.held)) {
		if c.held[i].releasing.IsZero() {
			out = append(out, c.held[i].h.shard)
		}
	}
	return out
}

// Run takes and keeps this replica's share of the shards, running run for
// each, until ctx is done; then it gives every shard back (each once its
// RunFunc has returned, or LeaseDuration after ctx was done, fenced) and
// returns nil. It logs through klog.FromContext(ctx).
func (c *Coordinator) Run(ctx context.Context, run RunFunc) error {
	if run == nil {
		return errors.New("sharding: Coordinator.Run: nil RunFunc")
	}
	var wg sync.WaitGroup
	defer wg.Wait() // the Lease informer and every RunFunc
	if s, ok := c.store.(*apiStore); ok {
		wg.Go(func() { s.informer.RunWithContext(ctx) })
		if !cache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
			return nil
		}
	}
	start := func(ctx context.Context, h *holding) {
		wg.Go(func() {
			defer c.poke()
			defer close(h.done)
			h.err = run(ctx, h.h)
		})
	}
	for ctx.Err() == nil {
		c.tick(ctx, start)
		t := c.opts.Clock.NewTimer(c.opts.RetryPeriod)
		select {
		case <-ctx.Done():
		case <-c.wake:
		case <-t.C():
		}
		t.Stop()
	}
	c.stop(klog.FromContext(ctx))
	return nil
}
