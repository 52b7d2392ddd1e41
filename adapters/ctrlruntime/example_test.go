package ctrlruntime_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// NewConfig fills the client side; the caller adds what the owner wants
// and how its status is written. In a manager, pass mgr.GetClient(),
// mgr.GetAPIReader() and mgr.GetScheme(), then ctrlruntime.Register.
func ExampleNewConfig() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()

	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](c, c, scheme, nil)
	if err != nil {
		panic(err)
	}
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.WriteStatus = func(_ context.Context, rs *appsv1.ReplicaSet, _ reconcile.SyncResult) (*appsv1.ReplicaSet, error) {
		return rs, nil // nothing written
	}
	ctrl, err := reconcile.NewController(cfg)
	fmt.Println(cfg.Kind.Kind, err == nil, ctrl.Len())
	// Output: ReplicaSet true 0
}
