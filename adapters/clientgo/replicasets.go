package clientgo

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// ReplicaSets returns [reconcile.ReplicaSets] (Kind, Describe and
// upstream's Status) with its Cluster filled in from client-go: owners and
// pods from factory's informers, [PodControl] over client (recorder may be
// nil) as the PodClient, [ReplicaSetStatusWriter] over client, and the
// informers' store versions as CacheVersions ([CacheVersions]). The
// consistency gate is on, as in upstream v1.37: a sync waits while a cache
// is older than the controller's own writes for that owner
// (DisableConsistencyGate turns it off); Expectations.Exact has the pod version
// it needs. The tuning fields keep their zero values (upstream's); set them
// before [reconcile.NewController]. The informers are created in factory,
// which the caller starts.
//
// Hooks.CreationsStopped records a Warning event on the owner with recorder
// when the creation breaker stops its creates (docs/rules.md ).
//
// The pod informer is factory's and the PodControl stamps nothing: give it
// a factory that selects every pod, as upstream. For a pod cache
// restricted to the controller's own pods, take the pod informer from
// [OwnedPods.Factory] and set PodControl.Labels from the same OwnedPods
// (the OwnedPods example builds that Config).
func ReplicaSets(client kubernetes.Interface, factory informers.SharedInformerFactory, recorder record.EventRecorder) reconcile.Config[*appsv1.ReplicaSet] {
	cfg := reconcile.ReplicaSets()
	rsInf, podInf := factory.Apps().V1().ReplicaSets().Informer(), factory.Core().V1().Pods().Informer()
	cfg.Cluster.Owners = ReplicaSetOwners(client, rsInf)
	cfg.Cluster.Pods = Pods{Indexer: podInf.GetIndexer()}
	cfg.Cluster.PodClient = PodControl{Client: client, Recorder: recorder}
	cfg.Cluster.StatusWriter = ReplicaSetStatusWriter{Client: client}
	cfg.Cluster.CacheVersions = CacheVersions(podInf, rsInf)
	cfg.Cluster.CachesSynced = CachesSynced(podInf, rsInf)
	cfg.Hooks = podops.StoppedEvents(cfg.Hooks, recorder, cfg.Kind)
	return cfg
}
