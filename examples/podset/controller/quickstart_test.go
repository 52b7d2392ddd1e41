package controller_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// TestSettles runs the PodSet controller as a manager would, its queue
// emptied after each change (ctrlruntimetest.Env.Settle): the events of
// every write reach the Controller, and the clock never moves, so the
// expectations can only be satisfied by observed pod events: without them
// the second round of creates and the scale-down would wait five minutes.
// Deleting the PodSet leaves nothing behind (Controller.Len).
func TestSettles(t *testing.T) {
	env, err := ctrlruntimetest.New(func(cfg reconcile.Config[*v1alpha1.PodSet]) (*controller.Controller, error) {
		return controller.New(cfg, controller.Options{})
	}, ctrlruntimetest.Options{Scheme: newScheme(t), Start: t0})
	require.NoError(t, err)
	count := func() int {
		pods, err := env.Pods(ns)
		require.NoError(t, err)
		return len(pods)
	}
	ps := podSet(3)
	ps.UID = ""
	require.NoError(t, env.Client.Create(t.Context(), ps))
	require.NoError(t, env.Settle())
	require.Equal(t, 3, count(), "first round")
	for _, replicas := range []string{"6", "2"} {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":`+replicas+`}}`))
		require.NoError(t, env.Client.Patch(t.Context(), ps, patch))
		require.NoError(t, env.Settle())
	}
	require.Equal(t, 2, count(), "scaled up, then down: every round observed")
	require.NoError(t, env.Client.Delete(t.Context(), ps))
	require.NoError(t, env.Settle())
	require.Zero(t, env.Controller.Len(), "nothing left for the deleted PodSet")
	require.Zero(t, env.Clock.Since(t0))
}
