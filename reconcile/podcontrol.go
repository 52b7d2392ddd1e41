package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodControl creates and deletes pods on behalf of a [Controller] or a
// [Manager]. A client-go
// implementation calls Pods(ns).Create and Pods(ns).Delete; a
// controller-runtime one calls client.Create and client.Delete. The Manager
// calls it concurrently (up to a slow-start batch of creates, or every
// delete of one call, at once), so implementations must be safe for
// concurrent use.
//
// CreatePod receives a pod built by the Manager, which the implementation may
// keep or modify; it returns the pod as created by the API server (with its
// Name and ResourceVersion). Under a [Controller], a returned pod without a
// Name, when only a GenerateName was sent, is reported as a failed create
// with an error saying why: the API in front of the PodControl ignores
// GenerateName (client-go's fake clientset does), so every later create
// would meet AlreadyExists; turn on Config.Expectations.Exact (which names
// pods itself) or use a GenerateName-aware fake (fakecluster). A bare Manager does not look at the returned pod, as upstream. DeletePod receives one of the caller's pods and
// must not modify it. Errors should be the API errors as returned by the
// client: the Manager recognizes NotFound on delete and the
// NamespaceTerminating cause on create with k8s.io/apimachinery/pkg/api/errors,
// which also looks through wrapped errors.
type PodControl interface {
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) // returns the created pod
	DeletePod(ctx context.Context, pod *corev1.Pod) error
}

// PodStamper is a [PodClient] that adds labels of its own to every pod it
// creates: the adapters' PodControl.Labels, the same on every pod, for a
// pod cache restricted to them (docs/rules.md ), and the sharding
// adapter's bucket label, which depends on the owner. A
// [Controller] whose Config.Cluster.PodClient is a PodStamper validates the
// owner's selector against the template's labels together with the stamp
// a selector that excludes the stamp would release every pod it
// creates. It also puts the stamp back on a controlled pod that lost it
//
//
// PodStamp returns the labels CreatePod adds to every pod it creates for
// owner (nil or empty: none); for a nil owner, those it adds to every pod
// whatever its owner. It must return the same labels for the same owner
// on every call and is called from Sync's goroutines; the Controller never
// modifies the map.
type PodStamper interface {
	PodStamp(owner metav1.Object) map[string]string
}

// PodGetter is a [PodClient] that can read one pod from the API server,
// bypassing any cache. A [Controller] whose Config.Cluster.PodClient is a
// PodGetter checks a controlled pod that left its pod cache without being
// deleted (a label-selected watch reports a pod stripped of the stamp as a
// deletion) before it replaces it. GetPod returns an error for
// which k8s.io/apimachinery/pkg/api/errors.IsNotFound holds when the pod
// does not exist; errors.ErrUnsupported means no live read is available.
// It needs get on pods (RBAC): a Forbidden answer is taken as no live
// read, so the pod is replaced, as upstream would. It must be safe for
// concurrent use.
type PodGetter interface {
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// stampOf returns the labels c declares it stamps on the pods it creates
// for owner, nil when it is not a [PodStamper].
func stampOf(c PodControl, owner metav1.Object) map[string]string {
	if s, ok := c.(PodStamper); ok && !isNilValue(s) {
		return s.PodStamp(owner)
	}
	return nil
}
