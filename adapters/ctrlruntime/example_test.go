package ctrlruntime_test

import (
	"context"
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

// Read-your-own-writes for a controller-runtime reconciler: the cache
// versions of the manager's informers turn on the consistency gate, so a
// sync waits while the cache is older than the controller's own writes. In
// a manager:
//
//	if cfg.CacheVersions, err = ctrlruntime.CacheVersions[*v1alpha1.PodSet](mgr.GetCache()); err != nil {
//		return err
//	}
//
// Here the cache is one a manager would build, not started.
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
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](c, c, scheme, nil)
	if err != nil {
		panic(err)
	}
	if cfg.CacheVersions, err = ctrlruntime.CacheVersions[*appsv1.ReplicaSet](informers); err != nil {
		panic(err)
	}
	fmt.Printf("owners %v, pods cache at %q\n", cfg.Resource, cfg.CacheVersions.Pods())
	// Output: owners replicasets.apps, pods cache at ""
}
