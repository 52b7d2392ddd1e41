package reconcile

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
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

// PodControlFuncs adapts functions to a [PodClient] (and so a
// [PodControl]). A nil field makes the corresponding call fail with an
// error.
type PodControlFuncs struct {
	Create func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)              // CreatePod calls it
	Delete func(ctx context.Context, pod *corev1.Pod) error                             // DeletePod calls it
	Patch  func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) // PatchPod calls it
}

var _ PodClient = PodControlFuncs{}

// CreatePod calls f.Create.
func (f PodControlFuncs) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if f.Create == nil {
		return nil, errors.New("reconcile: PodControlFuncs.Create is nil")
	}
	return f.Create(ctx, pod)
}

// DeletePod calls f.Delete.
func (f PodControlFuncs) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	if f.Delete == nil {
		return errors.New("reconcile: PodControlFuncs.Delete is nil")
	}
	return f.Delete(ctx, pod)
}

// PatchPod calls f.Patch.
func (f PodControlFuncs) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	if f.Patch == nil {
		return nil, errors.New("reconcile: PodControlFuncs.Patch is nil")
	}
	return f.Patch(ctx, pod, data)
}
