package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// TestStatusInterval pins Config.StatusInterval: while the owner
// converges, a status change is written at most once per interval and the
// skipped sync asks to be requeued when the interval ends; the first
// write, a new generation, a manage error and the converged status are
// written at once.
func TestStatusInterval(t *testing.T) {
	const interval = 10 * time.Second
	type step struct {
		at        time.Duration // clock offset of the sync
		tweak     func(c *recController, rs *appsv1.ReplicaSet)
		written   bool
		coalesced bool
		requeue   time.Duration
	}
	notReady := func(c *recController, rs *appsv1.ReplicaSet) {
		c.pods.pods = recOwned(rs, 2, podtest.NotReady())
	}
	ready := func(c *recController, rs *appsv1.ReplicaSet) {
		c.pods.pods = recOwned(rs, 2, podtest.Ready(podtest.Epoch))
	}
	cases := []struct {
		name     string
		interval time.Duration
		steps    []step
	}{
		{"converging: one write per interval, the skip requeued for the rest", interval, []step{
			{0, notReady, true, false, 0},
			{time.Second, nil, false, true, 9 * time.Second},
			{9 * time.Second, nil, false, true, time.Second},
			{10 * time.Second, nil, true, false, 0},
		}},
		{"the converged status is written at once", interval, []step{
			{0, notReady, true, false, 0},
			{time.Second, ready, true, false, 0},
			{2 * time.Second, nil, true, false, 0},
		}},
		{"a new generation is written at once", interval, []step{
			{0, notReady, true, false, 0},
			{time.Second, func(_ *recController, rs *appsv1.ReplicaSet) { rs.Generation++ }, true, false, 0},
			{2 * time.Second, nil, false, true, 9 * time.Second},
		}},
		{"another object under the same key is written at once", interval, []step{
			{0, notReady, true, false, 0},
			{time.Second, func(_ *recController, rs *appsv1.ReplicaSet) { rs.UID = types.UID("uid-web-2") }, true, false, 0},
		}},
		{"a clock that went back writes", interval, []step{
			{time.Minute, notReady, true, false, 0},
			{0, nil, true, false, 0},
		}},
		{"zero interval: every change written, as upstream", 0, []step{
			{0, notReady, true, false, 0},
			{time.Second, nil, true, false, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(podtest.Epoch)
			rs := recRS(2)
			ctl := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Clock = clk
				cfg.StatusInterval = c.interval
			})
			ctl.status.ret = func(next *appsv1.ReplicaSet) *appsv1.ReplicaSet { return next }
			for i, s := range c.steps {
				clk.Set(podtest.Epoch.Add(s.at))
				if s.tweak != nil {
					s.tweak(ctl, rs)
				}
				before := ctl.status.sentWrites()
				res, err := ctl.Sync(t.Context(), "default/web")
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, s.written, ctl.status.sentWrites() > before, "step %d: written", i)
				assert.Equal(t, s.written, res.StatusWritten, "step %d: StatusWritten", i)
				assert.Equal(t, s.coalesced, res.StatusCoalesced, "step %d: StatusCoalesced", i)
				assert.Equal(t, s.requeue, res.RequeueAfter, "step %d: RequeueAfter", i)
			}
		})
	}
}

// A manage error is written at once, even inside the interval: it carries
// the ReplicaFailure condition.
func TestStatusIntervalManageError(t *testing.T) {
	clk := fakeclock.New(podtest.Epoch)
	rs := recRS(2)
	ctl := newRecController(t, newRecOwners(rs), recOwned(rs, 1, podtest.NotReady()), func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Clock = clk
		cfg.StatusInterval = time.Minute
	})
	ctl.status.ret = func(next *appsv1.ReplicaSet) *appsv1.ReplicaSet { return next }
	ctl.control.CreateErr = func(context.Context, *corev1.Pod, int) error { return errRecQuota }
	_, err := ctl.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, errRecQuota)
	clk.Step(time.Second)
	ctl.Tracker().Delete("default/web") // let the next sync manage again
	res, err := ctl.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, errRecQuota)
	assert.True(t, res.StatusWritten)
	assert.False(t, res.StatusCoalesced)
	assert.Equal(t, 2, ctl.status.sentWrites())
}

// The owner's mark goes with the owner: a deleted owner recreated under
// the same key is written at once.
func TestStatusIntervalForgottenWithOwner(t *testing.T) {
	clk := fakeclock.New(podtest.Epoch)
	rs := recRS(2)
	owners := newRecOwners(rs)
	ctl := newRecController(t, owners, recOwned(rs, 2, podtest.NotReady()), func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Clock = clk
		cfg.StatusInterval = time.Minute
	})
	ctl.status.ret = func(next *appsv1.ReplicaSet) *appsv1.ReplicaSet { return next }
	_, err := ctl.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	owners.remove(rs)
	_, err = ctl.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	owners.set(rs)
	res, err := ctl.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.True(t, res.StatusWritten, "no mark survives the owner")
}
