package sharding

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// view is one round's reading of the group's Leases.
type view struct {
	now      time.Time
	byName   map[string]*coordinationv1.Lease
	replicas int // live replicas, this one included
	// holding counts the shards of this replica's count each live replica
	// holds, by identity, as the Leases say (this one's own included).
	holding map[string]int
	// free counts the shards of this replica's count whose Lease is
	// missing, has no holder or has expired.
	free    int
	blocked bool
}

// tick runs one round: it renews this replica's Leases, gives back what it
// must, and takes what it may, starting a RunFunc (start) for each shard
// taken. Rounds do not overlap (Run calls tick from one goroutine).
func (c *Coordinator) tick(ctx context.Context, start func(context.Context, *holding)) {
	log := klog.FromContext(ctx)
	v := c.read()
	c.keepReplica(ctx, v)
	c.keepShards(ctx, log, v)
	c.rebalance(log, v)
	c.take(ctx, log, v, start)
}

// read reads the cached Leases and notes the versions not seen before.
func (c *Coordinator) read() view {
	now := c.opts.Clock.Now()
	leases, _ := c.store.cached()
	v := view{now: now, byName: make(map[string]*coordinationv1.Lease, len(leases))}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range leases {
		if l.Labels[GroupLabel] != c.opts.Name {
			continue
		}
		v.byName[l.Name] = l
		if s, ok := c.seen[l.Name]; !ok || s.rv != l.ResourceVersion {
			c.seen[l.Name] = sighting{rv: l.ResourceVersion, at: now}
		}
	}
	for name := range c.seen {
		if _, ok := v.byName[name]; !ok {
			delete(c.seen, name)
		}
	}
	v.replicas = 1 // this one
	v.holding = map[string]int{c.opts.Identity: 0}
	for name, l := range v.byName {
		if _, isShard := leaseShard(l); isShard || name == c.replica {
			continue
		}
		if k, ok := l.Annotations[shardsAnnotation]; ok && k != strconv.Itoa(c.opts.Shards) {
			// A replica of another K holds none of these shards, and none
			// of its own while one of these is held: it is not one of the
			// replicas sharing them.
			continue
		}
		if c.liveHolderLocked(l, now) {
			v.replicas++
			v.holding[holderOf(l)] = 0
		}
	}
	v.free = c.opts.Shards
	for _, l := range v.byName {
		if s, ok := leaseShard(l); ok && s.Count == c.opts.Shards && c.liveHolderLocked(l, now) {
			v.free--
			if _, live := v.holding[holderOf(l)]; live {
				v.holding[holderOf(l)]++
			}
		}
	}
	for _, l := range v.byName {
		if s, ok := leaseShard(l); ok && s.Count != c.opts.Shards && c.liveHolderLocked(l, now) {
			v.blocked = true
		}
	}
	return v
}

// expiredLocked reports whether l has not changed, as this replica saw it,
// for its lease duration.
func (c *Coordinator) expiredLocked(l *coordinationv1.Lease, now time.Time) bool {
	s, ok := c.seen[l.Name]
	return ok && s.rv == l.ResourceVersion && now.Sub(s.at) >= durationOf(l, c.opts.LeaseDuration)
}

// liveHolderLocked reports whether l names a holder that may still hold it.
func (c *Coordinator) liveHolderLocked(l *coordinationv1.Lease, now time.Time) bool {
	return holderOf(l) != "" && !c.expiredLocked(l, now)
}

// share is the most shards a replica keeps when n replicas run.
func (c *Coordinator) share(n int) int {
	return (c.opts.Shards + n - 1) / n
}

// keepReplica creates or renews this replica's Lease.
func (c *Coordinator) keepReplica(ctx context.Context, v view) {
	c.mu.Lock()
	cur, due := c.replicaL, v.now.Sub(c.renewed) >= c.opts.RetryPeriod
	c.mu.Unlock()
	if cur == nil {
		cur = v.byName[c.replica]
	}
	var (
		got *coordinationv1.Lease
		err error
	)
	switch {
	case cur == nil:
		got, err = c.store.create(ctx, c.newLease(c.replica, nil, v.now))
	case due || holderOf(cur) != c.opts.Identity || cur.Annotations[shardsAnnotation] != strconv.Itoa(c.opts.Shards):
		next := cur.DeepCopy()
		c.stampHolder(next, v.now, false)
		if next.Annotations == nil {
			next.Annotations = map[string]string{}
		}
		next.Annotations[shardsAnnotation] = strconv.Itoa(c.opts.Shards)
		got, err = c.store.update(ctx, next)
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		c.replicaL, c.renewed = got, v.now
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err):
		c.replicaL = nil // read it again next round
	}
}

// keepShards renews the shards held, gives back those whose RunFunc has
// returned, and drops those lost.
func (c *Coordinator) keepShards(ctx context.Context, log klog.Logger, v view) {
	c.mu.Lock()
	indices := slices.Sorted(maps.Keys(c.held))
	c.mu.Unlock()
	for _, i := range indices {
		c.mu.Lock()
		hd := c.held[i]
		c.mu.Unlock()
		if cached := v.byName[hd.lease.Name]; cached != nil && holderOf(cached) != c.opts.Identity && newer(cached.ResourceVersion, hd.lease.ResourceVersion) {
			c.lose(log, i, hd, "the Lease names "+holderOf(cached))
			continue
		}
		if isClosed(hd.done) {
			// Every write of the RunFunc has returned: nothing is in flight.
			c.release(ctx, log, i, hd, v.now)
			continue
		}
		if !hd.releasing.IsZero() && v.now.Sub(hd.releasing) >= c.opts.LeaseDuration {
			// The RunFunc did not return: close the fence, and give the
			// shard back only once a write it started before could have
			// reached the API server (the margin LeaseDuration −
			// RenewDeadline, the fence's own assumption), so that no
			// write of ours lands after the next holder's.
			if hd.fenced.IsZero() {
				hd.h.close("given back: its controller did not stop within the lease duration")
				hd.fenced = v.now
			}
			if v.now.Sub(hd.fenced) >= c.opts.LeaseDuration-c.opts.RenewDeadline {
				c.release(ctx, log, i, hd, v.now)
				continue
			}
		}
		if v.now.Sub(hd.renewing) < c.opts.RetryPeriod {
			continue
		}
		next := hd.lease.DeepCopy()
		c.stampHolder(next, v.now, false)
		setWritten(next, hd.h.written())
		got, err := c.store.update(ctx, next)
		switch {
		case err == nil:
			if gap := c.opts.Clock.Now().Sub(hd.renewing); gap >= c.opts.RenewDeadline {
				log.Info("Renewed a shard's Lease after its fence had closed: its writes were refused meanwhile; is the Coordinator's client throttled or the API server slow?",
					"shard", hd.h.shard.String(), "sinceLastRenewal", gap.Round(time.Millisecond), "renewDeadline", c.opts.RenewDeadline)
				// The Lease may have looked expired meanwhile. A replica of
				// the same K would have taken this very Lease (the renewal
				// would have met a Conflict); one of another K took a Lease
				// of its own over some of these buckets. The same check as
				// after a take, before the fence opens again.
				if held, _, err := c.otherCountHeld(ctx, v.now, hd.h.shard); held || err != nil {
					c.giveBackClosed(log, hd, hd.renewing.Add(c.opts.RenewDeadline), v.now, "renewed late while a shard of another count is held, or that could not be checked", err)
					c.mu.Lock()
					hd.lease, hd.renewing = got, v.now
					c.mu.Unlock()
					continue
				}
			}
			hd.h.renew(v.now)
			c.mu.Lock()
			hd.lease, hd.renewing = got, v.now
			c.mu.Unlock()
		case apierrors.IsConflict(err):
			if cur := c.stillMine(ctx, hd.lease.Name); cur != nil {
				// A write of ours whose answer was lost changed it: keep
				// the shard; the next round renews from this version.
				c.mu.Lock()
				hd.lease = cur
				c.mu.Unlock()
				continue
			}
			c.lose(log, i, hd, "its renewal met "+err.Error())
		case apierrors.IsNotFound(err):
			c.lose(log, i, hd, "its renewal met "+err.Error())
		}
	}
}

// stillMine reads the Lease named name live and returns it if it still
// names this replica as its holder; nil otherwise, or when it cannot be
// read.
func (c *Coordinator) stillMine(ctx context.Context, name string) *coordinationv1.Lease {
	leases, err := c.store.live(ctx)
	if err != nil {
		return nil
	}
	for _, l := range leases {
		if l.Name == name && holderOf(l) == c.opts.Identity {
			return l
		}
	}
	return nil
}

// giveBackClosed closes hd's fence for good (it has been closed by time
// since closedAt) and has keepShards give the shard back: at once when its
// RunFunc has returned, else one margin (LeaseDuration − RenewDeadline)
// after closedAt, when every write started before has landed.
func (c *Coordinator) giveBackClosed(log klog.Logger, hd *holding, closedAt, now time.Time, why string, err error) {
	hd.h.close(why)
	hd.cancel()
	c.mu.Lock()
	hd.releasing = now.Add(-c.opts.LeaseDuration) // past the wait for the RunFunc
	hd.fenced = closedAt
	c.mu.Unlock()
	log.Info("Giving a shard back", "shard", hd.h.shard.String(), "lease", hd.lease.Name, "reason", why, "err", err)
}

// lose drops shard i at once: its fence closes and its RunFunc is told to stop.
func (c *Coordinator) lose(log klog.Logger, i int, hd *holding, why string) {
	hd.h.close("lost: " + why)
	hd.cancel()
	c.mu.Lock()
	delete(c.held, i)
	c.mu.Unlock()
	log.Info("Lost a shard", "shard", hd.h.shard.String(), "lease", hd.lease.Name, "reason", why)
}

// release gives shard i back: its fence closes, then its Lease is written
// with no holder and the newest write recorded.
func (c *Coordinator) release(ctx context.Context, log klog.Logger, i int, hd *holding, now time.Time) {
	hd.h.close("given back")
	hd.cancel()
	free := func(l *coordinationv1.Lease) error {
		next := l.DeepCopy()
		next.Spec.HolderIdentity = ptr.To("")
		next.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now))
		setWritten(next, hd.h.written())
		_, err := c.store.update(ctx, next)
		return err
	}
	err := free(hd.lease)
	if apierrors.IsConflict(err) {
		// A renewal whose answer was lost (its context ended with the
		// stop) may have changed the Lease: free it from its version if it
		// still names this replica, rather than leave it to expire.
		if cur := c.stillMine(ctx, hd.lease.Name); cur != nil {
			err = free(cur)
		}
	}
	c.mu.Lock()
	delete(c.held, i)
	c.mu.Unlock()
	log.Info("Gave a shard back", "shard", hd.h.shard.String(), "lease", hd.lease.Name, "written", hd.h.written(), "err", err, "runErr", hd.err)
}

// rebalance gives back shards so that every replica can hold its share:
// the shards held beyond ceil(K/N), from the highest index; and, while a
// live replica holds fewer than floor(K/N), one shard from the replica
// that holds the most (ties: the smallest identity), so that a replica
// that joins gets shards with as few moves as the counts need, one per
// round.
func (c *Coordinator) rebalance(log klog.Logger, v view) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keeping []int
	for i, hd := range c.held {
		if hd.releasing.IsZero() {
			keeping = append(keeping, i)
		}
	}
	slices.Sort(keeping)
	limit := c.share(v.replicas)
	if c.mostAboveFloorLocked(v, len(keeping)) {
		limit = len(keeping) - 1
	}
	for len(keeping) > limit {
		i := keeping[len(keeping)-1]
		keeping = keeping[:len(keeping)-1]
		hd := c.held[i]
		hd.releasing = v.now
		hd.cancel()
		log.Info("Giving a shard back to rebalance", "shard", hd.h.shard.String(), "replicas", v.replicas, "share", c.share(v.replicas))
	}
}

// mostAboveFloorLocked reports whether the live replicas holding fewer
// than floor(K/N) shards lack more than the free shards can give them,
// while this one, keeping mine, holds more than floor(K/N) and the most of
// those that do (ties: the smallest identity).
func (c *Coordinator) mostAboveFloorLocked(v view, mine int) bool {
	floor := c.opts.Shards / v.replicas
	counts := maps.Clone(v.holding)
	counts[c.opts.Identity] = mine
	lacking := 0
	for _, n := range counts {
		lacking += max(floor-n, 0)
	}
	if lacking <= v.free || mine <= floor {
		return false
	}
	for id, n := range counts {
		if id != c.opts.Identity && (n > mine || (n == mine && id < c.opts.Identity)) {
			return false
		}
	}
	return true
}

// take takes free shards up to this replica's share, ceil(K/N). While
// another live replica holds fewer than floor(K/N), a replica that holds
// at least that many leaves a free shard to it for one RetryPeriod (its
// watch event wakes it at once), so that shards do not change hands twice.
func (c *Coordinator) take(ctx context.Context, log klog.Logger, v view, start func(context.Context, *holding)) {
	if v.blocked || v.now.Before(c.refrain) {
		return
	}
	floor := c.opts.Shards / v.replicas
	othersShort := false
	for id, n := range v.holding {
		othersShort = othersShort || (id != c.opts.Identity && n < floor)
	}
	k := c.opts.Shards
	first := int(Hash(types.UID(c.opts.Identity)) % uint64(k))
	for n := range k {
		c.mu.Lock()
		keeping := 0
		for _, hd := range c.held {
			if hd.releasing.IsZero() {
				keeping++
			}
		}
		_, mine := c.held[(first+n)%k]
		c.mu.Unlock()
		if keeping >= c.share(v.replicas) {
			return
		}
		if mine {
			continue
		}
		s := Shard{Index: (first + n) % k, Count: k}
		c.takeShard(ctx, log, v, s, othersShort && keeping >= floor, start)
		if v.now.Before(c.refrain) {
			return
		}
	}
}

// takeShard takes s if its Lease is missing, has no holder or has expired;
// patient, only an expired one or one seen without a holder for a
// RetryPeriod.
func (c *Coordinator) takeShard(ctx context.Context, log klog.Logger, v view, s Shard, patient bool, start func(context.Context, *holding)) {
	name := shardLeaseName(c.opts.Name, s)
	cur := v.byName[name]
	c.mu.Lock()
	free := cur == nil || holderOf(cur) == "" || holderOf(cur) == c.opts.Identity || c.expiredLocked(cur, v.now)
	if patient && free && (cur == nil || !c.expiredLocked(cur, v.now)) {
		seen, ok := c.seen[name]
		free = cur != nil && holderOf(cur) == "" && ok && v.now.Sub(seen.at) >= c.opts.RetryPeriod
	}
	c.mu.Unlock()
	if !free {
		return
	}
	var (
		got *coordinationv1.Lease
		err error
	)
	if cur == nil {
		got, err = c.store.create(ctx, c.newLease(name, &s, v.now))
	} else {
		next := cur.DeepCopy()
		c.stampHolder(next, v.now, true)
		got, err = c.store.update(ctx, next)
	}
	if err != nil {
		return // taken by another replica first, or a failure: next round
	}
	// A replica with another number of shards may have taken an
	// overlapping shard since this round's read: a consistent read, after
	// our write, shows its holder; it shows ours to it in the same way, so
	// at most one of two such replicas keeps its shard.
	held, resume, err := c.otherCountHeld(ctx, v.now, s)
	if held || err != nil {
		if err != nil {
			log.Error(err, "Gave a shard straight back: the Leases could not be listed to check that no shard of another count is held (the Coordinator needs list on leases)", "shard", s.String(), "lease", name)
		} else {
			log.Info("Gave a shard straight back: a shard of another count is held", "shard", s.String(), "lease", name)
		}
		next := got.DeepCopy()
		next.Spec.HolderIdentity = ptr.To("")
		_, _ = c.store.update(ctx, next)
		c.refrain = v.now.Add(c.opts.RetryPeriod)
		return
	}
	runCtx, cancel := context.WithCancel(ctx)
	hd := &holding{
		h:        newHeld(s, name, newest(got.Annotations[WrittenAnnotation], resume), c.opts.Clock, c.opts.RenewDeadline, v.now),
		lease:    got,
		renewing: v.now,
		cancel:   cancel,
		done:     make(chan struct{}),
	}
	c.mu.Lock()
	c.held[s.Index] = hd
	c.mu.Unlock()
	log.Info("Took a shard", "shard", s.String(), "lease", name, "resume", hd.h.resume, "previousHolder", holderOf(cur))
	start(runCtx, hd)
}

// otherCountHeld reads the group's Leases live and reports whether a shard
// of another count has a holder that may still hold it, or why the read
// failed; and the newest write recorded in the Leases of every count whose
// buckets overlap s's (after a change of K, the last writes of the old K's
// holders are in Leases other than s's own).
func (c *Coordinator) otherCountHeld(ctx context.Context, now time.Time, s Shard) (bool, string, error) {
	leases, err := c.store.live(ctx)
	if err != nil {
		return false, "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	held, resume := false, ""
	for _, l := range leases {
		t, ok := leaseShard(l)
		if !ok {
			continue
		}
		if t.Count != c.opts.Shards && c.liveHolderLocked(l, now) {
			held = true
		}
		if t.first() < s.end() && s.first() < t.end() {
			resume = newest(resume, l.Annotations[WrittenAnnotation])
		}
	}
	return held, resume, nil
}

// newest is the newer of two resourceVersions ("" when both are).
func newest(a, b string) string {
	if newer(b, a) {
		return b
	}
	return a
}

// stop gives every shard back, once its RunFunc returned or LeaseDuration
// after the call, and deletes this replica's Lease first, so that the
// others' share grows before the shards are free. A shard is given back as
// soon as its RunFunc has returned, whatever the others do, and each write
// has RenewDeadline of its own: the writes after a slow RunFunc are not
// lost to an earlier deadline (which left their Leases to expire).
func (c *Coordinator) stop(log klog.Logger) {
	c.mu.Lock()
	mine := c.replicaL
	hds := maps.Clone(c.held)
	c.mu.Unlock()
	if mine != nil {
		c.write(func(ctx context.Context) { _ = c.store.remove(ctx, mine.Name, mine.ResourceVersion) })
	}
	for _, hd := range hds {
		hd.cancel()
	}
	given := make(map[int]bool, len(hds))
	giveBack := func(i int) {
		if given[i] {
			return
		}
		c.write(func(ctx context.Context) { c.release(ctx, log, i, hds[i], c.opts.Clock.Now()) })
		given[i] = true
	}
	// returned tells, in the order they return, which RunFuncs did.
	returned := make(chan int, len(hds))
	quit := make(chan struct{})
	defer close(quit)
	for i, hd := range hds {
		go func() {
			select {
			case <-hd.done:
				returned <- i
			case <-quit:
			}
		}()
	}
	deadline := c.opts.Clock.Now().Add(c.opts.LeaseDuration)
	for _, i := range slices.Sorted(maps.Keys(hds)) {
		// One timer per shard, in index order (the model test follows
		// them), even for a shard already given back; while it runs,
		// every shard whose RunFunc returns is given back at once.
		if wait := deadline.Sub(c.opts.Clock.Now()); wait > 0 {
			t := c.opts.Clock.NewTimer(wait)
		waiting:
			for !given[i] {
				select {
				case j := <-returned:
					giveBack(j)
				case <-t.C():
					break waiting
				}
			}
			t.Stop()
		}
		giveBack(i)
	}
}

// write runs one of stop's writes with RenewDeadline of its own.
func (c *Coordinator) write(do func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.RenewDeadline)
	defer cancel()
	do(ctx)
}

// newLease returns a Lease of the group named name held by this replica:
// the Lease of shard s, or this replica's when s is nil.
func (c *Coordinator) newLease(name string, s *Shard, now time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name:      name,
		Namespace: c.opts.Namespace,
		Labels:    map[string]string{GroupLabel: c.opts.Name},
	}}
	if s != nil {
		l.Annotations = map[string]string{shardAnnotation: s.String()}
	} else {
		l.Annotations = map[string]string{shardsAnnotation: strconv.Itoa(c.opts.Shards)}
	}
	c.stampHolder(l, now, true)
	return l
}

// stampHolder makes l held by this replica from now; acquire also sets
// the acquire time and counts a transition.
func (c *Coordinator) stampHolder(l *coordinationv1.Lease, now time.Time, acquire bool) {
	t := metav1.NewMicroTime(now)
	if acquire || holderOf(l) != c.opts.Identity {
		l.Spec.AcquireTime = &t
		transitions := int32(0)
		if l.Spec.LeaseTransitions != nil {
			transitions = *l.Spec.LeaseTransitions + 1
		}
		l.Spec.LeaseTransitions = &transitions
	}
	l.Spec.HolderIdentity = ptr.To(c.opts.Identity)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(c.opts.LeaseDuration / time.Second))
	l.Spec.RenewTime = &t
}

// setWritten records rv in l's WrittenAnnotation when it is newer.
func setWritten(l *coordinationv1.Lease, rv string) {
	if rv == "" || !newer(rv, l.Annotations[WrittenAnnotation]) {
		return
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[WrittenAnnotation] = rv
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
