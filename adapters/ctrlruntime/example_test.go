package ctrlruntime_test

import (
	"context"
	"fmt"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// offlineManager is a manager that is never started and never contacts
// its API server: its RESTMapper is a fixed list instead of the server's
// discovery. A program builds one with
// ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{}).
func offlineManager() manager.Manager {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:6443"}, ctrl.Options{
		Metrics:        metricsserver.Options{BindAddress: "0"},
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
	})
	if err != nil {
		panic(err)
	}
	return mgr
}

// NewConfig fills Kind and Cluster from the manager; the caller adds what
// an owner asks for (Describe) and how its status is computed (Status):
// for ReplicaSets, upstream's. The consistency gate is on, over the
// manager's cache.
func ExampleNewConfig() {
	mgr := offlineManager()
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		panic(err)
	}
	upstream := reconcile.ReplicaSets()
	cfg.Describe = upstream.Describe
	cfg.Status = upstream.Status
	c, err := reconcile.NewController(cfg)
	fmt.Println(cfg.Kind.Kind, cfg.Cluster.Resource, err, c.Len(), cfg.DisableConsistencyGate)
	// Output: ReplicaSet replicasets.apps <nil> 0 false
}

// Register returns the controller-runtime controller it built, which takes
// more watches, each with its own predicates: here the ReplicaSets of a
// namespace are synced again whenever its ConfigMap "defaults" changes.
func ExampleRegister() {
	mgr := offlineManager()
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	if err != nil {
		panic(err)
	}
	upstream := reconcile.ReplicaSets()
	cfg.Describe = upstream.Describe
	cfg.Status = upstream.Status
	c, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}
	ctl, err := ctrlruntime.Register(mgr, "replicasets-and-defaults", c, ctrlruntime.Options{})
	if err != nil {
		panic(err)
	}
	replicaSetsOf := func(ctx context.Context, cm *corev1.ConfigMap) []crreconcile.Request {
		var list appsv1.ReplicaSetList
		if err := mgr.GetClient().List(ctx, &list, client.InNamespace(cm.Namespace)); err != nil {
			return nil
		}
		reqs := make([]crreconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
	isDefaults := predicate.NewTypedPredicateFuncs(func(cm *corev1.ConfigMap) bool { return cm.Name == "defaults" })
	err = ctl.Watch(source.Kind(mgr.GetCache(), &corev1.ConfigMap{}, handler.TypedEnqueueRequestsFromMapFunc(replicaSetsOf), isDefaults))
	// A program then runs mgr.Start(ctrl.SetupSignalHandler()).
	fmt.Println(err)
	// Output: <nil>
}

// CacheVersions reads the versions of the manager cache's informers, for
// the consistency gate, and CachesSynced whether they have loaded, for the
// unsynced-cache guard (NewConfig calls both). A cache that has not synced
// answers "".
func ExampleCacheVersions() {
	mgr := offlineManager()
	versions, err := ctrlruntime.CacheVersions[*appsv1.ReplicaSet](mgr.GetCache())
	if err != nil {
		panic(err)
	}
	synced, err := ctrlruntime.CachesSynced[*appsv1.ReplicaSet](mgr.GetCache())
	if err != nil {
		panic(err)
	}
	fmt.Printf("pods cache at %q, synced: %v\n", versions.Pods(), synced())
	// Output: pods cache at "", synced: false
}

// A manager whose caches are lean: managedFields dropped everywhere
// (TrimManagedFields), and a pod cache holding only the controller's own
// running pods, each reduced to what the library reads (OwnedPods,
// LeanPods). One OwnedPods gives both the cache's pod selectors and, in
// NewConfig, the labels its PodControl stamps on every pod it creates.
func ExampleOwnedPods() {
	owned, err := ctrlruntime.NewOwnedPods(map[string]string{"example.com/managed-by": "replicasets"}, true)
	if err != nil {
		panic(err)
	}
	opts := ctrl.Options{Cache: cache.Options{
		DefaultTransform: ctrlruntime.TrimManagedFields,
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: ctrlruntime.LeanPods}},
	}}
	// Refused if the options already select pods the stamp does not meet.
	opts.Cache, err = owned.CacheOptions(opts.Cache)
	if err != nil {
		panic(err)
	}
	pods := opts.Cache.ByObject[podKey(opts.Cache)]
	fmt.Println(pods.Label, "|", pods.Field, "|", pods.Transform != nil)

	mgr := offlineManager() // in a program: ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{OwnedPods: owned})
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Cluster.PodClient.(reconcile.PodStamper).PodStamp(nil))
	// Output:
	// example.com/managed-by=replicasets | status.phase!=Succeeded,status.phase!=Failed | true
	// map[example.com/managed-by:replicasets]
}

// podKey returns the key of opts' ByObject entry for pods.
func podKey(opts cache.Options) client.Object {
	for obj := range opts.ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			return obj
		}
	}
	return nil
}

// With controller-runtime's fake client, register the pod index (WithIndex)
// to read a ReplicaSet's pods and the orphans by index, as Register's
// manager cache does.
func ExamplePodControllerValue() {
	yes := true
	ref := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "u1", Controller: &yes}}
	pods := []client.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", OwnerReferences: ref}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other", OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "db", UID: "u2", Controller: &yes}}}},
	}
	c := fake.NewClientBuilder().
		WithIndex(&corev1.Pod{}, ctrlruntime.PodControllerField, ctrlruntime.PodControllerValue).
		WithObjects(pods...).
		Build()
	got, err := ctrlruntime.Pods{Reader: c}.ListByController("default", "ReplicaSet", "web", "u1")
	for _, p := range got {
		fmt.Println(p.Name)
	}
	fmt.Println(err)
	// Output:
	// web-1
	// orphan
	// <nil>
}
