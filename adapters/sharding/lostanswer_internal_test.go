package sharding

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// versionedStore is a group's Leases with resourceVersions and Conflicts,
// as kube-apiserver keeps them, its cache always up to date; listErr, if
// set, refuses its consistent list (a Role without list on leases).
type versionedStore struct {
	rv      int
	leases  map[string]*coordinationv1.Lease
	writes  int
	listErr error
}

func (s *versionedStore) cached() ([]*coordinationv1.Lease, error) {
	return slices.Collect(maps.Values(s.leases)), nil
}

func (s *versionedStore) live(context.Context) ([]*coordinationv1.Lease, error) {
	if s.listErr != nil {
		return nil, s.listErr
	}
	return s.cached()
}

func (s *versionedStore) create(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return s.put(l), nil
}

func (s *versionedStore) update(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if cur, ok := s.leases[l.Name]; ok && cur.ResourceVersion != l.ResourceVersion {
		return nil, apierrors.NewConflict(leaseResource, l.Name, nil)
	}
	return s.put(l), nil
}

func (s *versionedStore) remove(_ context.Context, name, _ string) error {
	delete(s.leases, name)
	return nil
}

func (s *versionedStore) put(l *coordinationv1.Lease) *coordinationv1.Lease {
	s.writes++
	s.rv++
	l = l.DeepCopy()
	l.ResourceVersion = strconv.Itoa(s.rv)
	s.leases[l.Name] = l
	return l.DeepCopy()
}

// A renewal whose answer was lost (its context ended with a SIGTERM while
// kube-apiserver applied it) leaves the Coordinator with an older version
// of its Lease. Giving the shard back, and renewing it, must not then fail
// on a Conflict and leave the Lease to expire (a re-shard at 1000 × 10
// waited 17.9 s for one): a Lease that still names this replica is written
// from its current version.
func TestLostRenewalAnswerDoesNotStrandTheLease(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	opts, err := Options{Namespace: "ns", Name: "g", Identity: "a", Shards: 2, Clock: clk}.withDefaults()
	require.NoError(t, err)
	s := &versionedStore{leases: map[string]*coordinationv1.Lease{}}
	c := newCoordinator(s, opts)
	ctx := klog.NewContext(context.Background(), logr.Discard())
	start := func(context.Context, *holding) {}
	c.tick(ctx, start)
	require.Len(t, c.Shards(), 2)

	// Renewals the Coordinator never heard back from.
	lostAnswer := func() {
		for _, hd := range c.held {
			next := s.leases[hd.lease.Name].DeepCopy()
			next.Annotations[WrittenAnnotation] = "7"
			s.put(next)
		}
	}
	lostAnswer()
	clk.Step(opts.RetryPeriod)
	c.tick(ctx, start)
	assert.Len(t, c.Shards(), 2, "a renewal's Conflict on a Lease still ours loses nothing")
	clk.Step(opts.RetryPeriod)
	c.tick(ctx, start)
	for _, hd := range c.held {
		assert.NoError(t, hd.h.Fence(), "renewed again from the current version")
	}

	lostAnswer()
	for _, hd := range c.held {
		close(hd.done) // the controllers have returned
	}
	c.stop(logr.Discard())
	for name, l := range s.leases {
		if _, isShard := leaseShard(l); isShard {
			assert.Empty(t, holderOf(l), "%s: given back, not left to expire", name)
		}
	}
}
