package clientgo

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// PodControllerIndex is the name of the pod informer index by controller
// reference that [Pods] reads: upstream's name and keys
// (k8s.io/kubernetes/pkg/controller.PodControllerIndex), so an informer
// that kube-controller-manager's AddPodControllerIndexer already indexed
// serves both. A pod's key is "namespace/kind/name/uid" of its controller
// ownerRef, or its namespace when it has none.
const PodControllerIndex = "podController"

// ControllerUIDIndex is the name of the owner informer index by the UID
// of the owner's controller ownerRef that [Owners] reads (upstream's
// ReplicaSet controller's controllerUID index). An owner without a
// controller is not indexed.
const ControllerUIDIndex = "controllerUID"

// AddPodControllerIndexer adds [PodControllerIndex] to a pod informer. An
// index already registered under that name is kept and nil returned, as
// upstream's AddPodControllerIndexer does: it must have the same keys. It
// may be called before or after the informer starts (client-go indexes the
// cached pods then).
func AddPodControllerIndexer(informer cache.SharedIndexInformer) error {
	return addIndexer(informer, PodControllerIndex, func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		return podops.PodControllerKeys(pod), nil
	})
}

// AddControllerUIDIndexer adds [ControllerUIDIndex] to an owner informer,
// keeping an index already registered under that name (which must have the
// same keys).
func AddControllerUIDIndexer(informer cache.SharedIndexInformer) error {
	return addIndexer(informer, ControllerUIDIndex, func(obj any) ([]string, error) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return nil, nil
		}
		return podops.ControllerUIDKeys(o), nil
	})
}

func addIndexer(informer cache.SharedIndexInformer, name string, fn cache.IndexFunc) error {
	if _, exists := informer.GetIndexer().GetIndexers()[name]; exists {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{name: fn})
}

// hasIndex reports whether indexer has an index named name.
func hasIndex(indexer cache.Indexer, name string) bool {
	_, ok := indexer.GetIndexers()[name]
	return ok
}
