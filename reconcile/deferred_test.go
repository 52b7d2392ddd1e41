package reconcile_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// a sync asked before the caches have synced reads nothing and
// writes nothing, and is deferred (not terminal); once they have synced it
// sees the pods that were there all along and creates none of them again.
// The probe of issue 32: a sync after the owners' cache synced but before
// the pods' did created 6 pods for replicas 3.
func TestSyncDeferredUntilCachesSynced(t *testing.T) {
	rs := recRS(3)
	existing := recOwned(rs, 3)
	var synced atomic.Bool
	c := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.CachesSynced = synced.Load
	})

	for range 3 {
		res, err := c.Sync(t.Context(), "default/web")
		require.Error(t, err)
		assert.ErrorIs(t, err, reconcile.ErrDeferred)
		assert.ErrorIs(t, err, reconcile.ErrNotSynced)
		assert.NotErrorIs(t, err, reconcile.ErrTerminal)
		assert.Equal(t, "reconcile: owner default/web: sync deferred: the informer caches have not synced yet", err.Error())
		assert.Zero(t, res)
	}
	assert.Zero(t, c.pods.calls, "no pod listing while the caches load")
	assert.Empty(t, c.status.writes())
	assert.Empty(t, c.control.creates())

	// The pod cache has listed: the three pods were there all along.
	c.pods.pods = existing
	synced.Store(true)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Len(t, res.Active, 3)
	assert.Empty(t, c.control.creates(), "exactly 3 pods, none created again")
}

// the guard is required. A Cluster without CachesSynced does not
// build, so no Controller can sync on caches it cannot tell are loaded.
func TestSyncWithoutTheGuardDoesNotBuild(t *testing.T) {
	c := newRecController(t, newRecOwners(recRS(2)), nil, nil)
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = c.owners, c.pods, podClient{c.control, c.patcher}
	(&recStatus{}).use(&cfg)
	_, err := reconcile.NewController(cfg)
	require.ErrorContains(t, err, "reconcile: NewController: Config.Cluster.CachesSynced is required (the unsynced-cache guard")
}

// a gate deferral is an ErrDeferred error that names the owner
// once and lets errors.As find the StaleCacheError.
func TestSyncGateDeferralIsErrDeferred(t *testing.T) {
	var podsRV atomic.Value
	podsRV.Store("10")
	c := newRecController(t, newRecOwners(recRS(1)), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.CacheVersions.Pods = func() string { return podsRV.Load().(string) }
	})
	_, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	require.Len(t, c.control.creates(), 1)

	_, err = c.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, reconcile.ErrDeferred)
	assert.NotErrorIs(t, err, reconcile.ErrNotSynced)
	assert.NotErrorIs(t, err, reconcile.ErrTerminal)
	var stale *expectations.StaleCacheError
	require.True(t, errors.As(err, &stale))
	assert.Equal(t, expectations.PodsResource, stale.Resource)
	assert.Equal(t, "reconcile: owner default/web: sync deferred: the pods cache is at resourceVersion 10, older than the controller's own write at 100", err.Error())
}
