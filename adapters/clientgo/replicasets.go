package clientgo

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// ReplicaSets returns [reconcile.ReplicaSets] (Kind, Resource, Describe and
// upstream's Status) with every client-go piece filled in: owners and pods
// from factory's informers, [PodControl] over client (recorder may be nil)
// as Control and Patcher, [ReplicaSetStatusWriter] over client as
// StatusWriter, and the informers' store versions as CacheVersions
// ([CacheVersions]). The consistency gate is on, as in upstream v1.37: a
// sync waits while a cache is older than the controller's own writes for
// that owner; set DisableConsistencyGate to turn it off. Exact (tracked
// creations with evidence) has the pod version it needs. The tuning fields
// keep their zero values (upstream's); set them before
// [reconcile.NewController]. The informers are created in factory, which
// the caller starts.
func ReplicaSets(client kubernetes.Interface, factory informers.SharedInformerFactory, recorder record.EventRecorder) reconcile.Config[*appsv1.ReplicaSet] {
	cfg := reconcile.ReplicaSets()
	rsInf, podInf := factory.Apps().V1().ReplicaSets().Informer(), factory.Core().V1().Pods().Informer()
	cfg.Owners = ReplicaSetOwners(client, rsInf)
	cfg.Pods = Pods{Indexer: podInf.GetIndexer()}
	cfg.CacheVersions = CacheVersions(podInf, rsInf)
	pc := PodControl{Client: client, Recorder: recorder}
	cfg.Control, cfg.Patcher = pc, pc
	cfg.StatusWriter = ReplicaSetStatusWriter{Client: client}
	return cfg
}
