package clientgo

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// ReplicaSets returns [reconcile.ReplicaSets] (Kind, Describe and
// upstream's Status) with its Cluster filled in from client-go by
// [NewConfig]'s own code: owners and pods from factory's informers,
// [PodControl] over client (recorder may be nil) as the PodClient,
// [StatusWriter] over client's ReplicaSets (the write and retry of
// [ReplicaSetStatusWriter]), and the informers' store versions and sync
// state ([CacheVersions], [CachesSynced]). The consistency gate is on, as
// in upstream v1.37: a sync waits while a cache is older than the
// controller's own writes for that owner (DisableConsistencyGate turns it
// off); Expectations.Exact has the pod version it needs. The tuning fields
// keep their zero values (upstream's); set them before
// [reconcile.NewController]. The informers are created in factory, which
// the caller starts.
//
// Hooks.CreationsStopped records a Warning event on the owner with recorder
// when the creation breaker stops its creates (docs/rules.md ).
//
// The pod informer is factory's and selects every pod, as upstream: give
// it a factory that selects every object. For a pod informer restricted
// to the controller's own pods, or the [Production] profile, call
// NewConfig with the pods' own factory and [ReplicaSetKind].
func ReplicaSets(client kubernetes.Interface, factory informers.SharedInformerFactory, recorder record.EventRecorder) reconcile.Config[*appsv1.ReplicaSet] {
	upstream := reconcile.ReplicaSets()
	cfg := build(client, factory, ReplicaSetKind(client, factory), ConfigOptions{Recorder: recorder})
	cfg.Describe, cfg.Status = upstream.Describe, upstream.Status
	return cfg
}

// ReplicaSetKind is the [Kind] of apps/v1 ReplicaSets for [NewConfig]:
// factory's ReplicaSet informer and client's ReplicaSets.
func ReplicaSetKind(client kubernetes.Interface, factory informers.SharedInformerFactory) Kind[*appsv1.ReplicaSet] {
	upstream := reconcile.ReplicaSets()
	return Kind[*appsv1.ReplicaSet]{
		GroupVersionKind: upstream.Kind,
		Resource:         upstream.Cluster.Resource,
		Informer:         factory.Apps().V1().ReplicaSets().Informer(),
		Client:           replicaSetClient(client),
	}
}
