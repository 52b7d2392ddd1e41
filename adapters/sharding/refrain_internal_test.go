package sharding

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// A take the Coordinator cannot check (its consistent list refused) is
// given straight back, and nothing is taken again for a RetryPeriod: not at
// each of the watch events the give-back itself causes. Before, a replica
// without list on leases took and gave back its shards about a hundred
// times a second.
func TestUncheckedTakeWaitsARetryPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	opts, err := Options{Namespace: "ns", Name: "g", Identity: "a", Shards: 4, Clock: clk}.withDefaults()
	require.NoError(t, err)
	s := &versionedStore{leases: map[string]*coordinationv1.Lease{},
		listErr: apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", errors.New("no list"))}
	c := newCoordinator(s, opts)
	ctx := klog.NewContext(context.Background(), logr.Discard())
	started := 0
	start := func(context.Context, *holding) { started++ }

	c.tick(ctx, start) // the replica's Lease, one take, its give-back
	first := s.writes
	assert.Equal(t, 3, first, "the replica's Lease, one shard taken and given straight back")
	for range 100 { // the watch events of those writes, and more
		c.tick(ctx, start)
	}
	assert.Equal(t, first, s.writes, "nothing taken again within the RetryPeriod")
	clk.Step(opts.RetryPeriod)
	c.tick(ctx, start)
	assert.Greater(t, s.writes, first, "taken again after it")
	assert.Zero(t, started, "no shard is run unchecked")
	assert.Empty(t, c.Shards())
}
