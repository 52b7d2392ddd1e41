package ctrlruntime_test

import (
	"context"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Register builds a controller in a manager (not started: nothing is
// contacted) from the manager's client, API reader and scheme.
func TestRegisterBuildsAController(t *testing.T) {
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:  scheme(t),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme(), nil)
	require.NoError(t, err)
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.WriteStatus = reconcile.ReplicaSets().WriteStatus
	if cfg.WriteStatus == nil {
		cfg.WriteStatus = func(_ context.Context, rs *appsv1.ReplicaSet, _ reconcile.SyncResult) (*appsv1.ReplicaSet, error) {
			return rs, nil
		}
	}
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	assert.NoError(t, ctrlruntime.Register(mgr, "replicaset", c))
	assert.Error(t, ctrlruntime.Register[*appsv1.ReplicaSet](mgr, "x", nil))
}
