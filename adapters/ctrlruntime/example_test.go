package ctrlruntime_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// NewConfig fills the client side; the caller adds what the owner wants
// and how its status is computed. In a manager, pass mgr.GetClient(),
// mgr.GetAPIReader(), mgr.GetCache() and mgr.GetScheme(), then
// ctrlruntime.Register. Here nil informers: no consistency gate.
func ExampleNewConfig() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()

	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](c, c, nil, scheme, nil)
	if err != nil {
		panic(err)
	}
	cfg.Describe = reconcile.ReplicaSets().Describe
	cfg.Status = reconcile.ReplicaSets().Status // upstream's; NewConfig set the StatusWriter
	ctrl, err := reconcile.NewController(cfg)
	fmt.Println(cfg.Kind.Kind, err == nil, ctrl.Len(), cfg.Consistency.Disable)
	// Output: ReplicaSet true 0 true
}

// Read-your-own-writes for a controller-runtime reconciler: given the
// manager's cache, NewConfig reads its informers' versions, so the
// consistency gate is on, as upstream v1.37's: a sync waits while the cache
// is older than the controller's own writes. Here the cache is one a
// manager would build, not started.
func ExampleCacheVersions() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	mapper := meta.NewDefaultRESTMapper(nil) // a manager discovers the kinds instead
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	informers, err := cache.New(&rest.Config{Host: "https://127.0.0.1:6443"}, cache.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		panic(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](c, c, informers, scheme, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("owners %v, pods cache at %q, gate off: %v\n", cfg.Cluster.Resource, cfg.Cluster.CacheVersions.Pods(), cfg.Consistency.Disable)
	// Output: owners replicasets.apps, pods cache at "", gate off: false
}
