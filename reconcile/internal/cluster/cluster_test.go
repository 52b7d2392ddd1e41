package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

func TestNewWiresOneClock(t *testing.T) {
	c := cluster.New(cluster.Options{})
	assert.Equal(t, cluster.Epoch, c.Clock.Now())
	c.Clock.Step(time.Minute)
	p, err := c.API.Create(named("a"))
	require.NoError(t, err)
	assert.Equal(t, cluster.Epoch.Add(time.Minute), p.CreationTimestamp.Time, "the API reads the cluster clock")
	require.Len(t, c.Informer.Pending(), 1, "the informer watches the API")
	assert.Equal(t, cluster.Epoch.Add(time.Minute), c.Informer.Pending()[0].At)

	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, start, cluster.New(cluster.Options{Start: start}).Clock.Now())
}
