package clientgo

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// ReplicaSets returns [reconcile.ReplicaSets] with every client-go piece
// filled in: owners and pods from factory's informers, their stores'
// versions as CacheVersions ([CacheVersions]: the consistency gate is on, as
// in upstream v1.37; set DisableConsistencyGate to turn it off),
// [PodControl] over client (recorder may be nil) as Control and Patcher, and
// [ReplicaSetStatus] as WriteStatus. The tuning fields keep their zero
// values (upstream's); set them before [reconcile.NewController]. The
// informers are created in factory, which the caller starts.
func ReplicaSets(client kubernetes.Interface, factory informers.SharedInformerFactory, recorder record.EventRecorder) reconcile.Config[*appsv1.ReplicaSet] {
	cfg := reconcile.ReplicaSets()
	rsInf, podInf := factory.Apps().V1().ReplicaSets().Informer(), factory.Core().V1().Pods().Informer()
	cfg.Owners = ReplicaSetOwners(client, rsInf)
	cfg.Pods = Pods{Indexer: podInf.GetIndexer()}
	cfg.CacheVersions = CacheVersions(podInf, rsInf)
	pc := PodControl{Client: client, Recorder: recorder}
	cfg.Control, cfg.Patcher = pc, pc
	cfg.WriteStatus = ReplicaSetStatus(client, status.Options{})
	return cfg
}
