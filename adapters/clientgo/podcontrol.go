package clientgo

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Event reasons recorded on a pod's controller, as upstream's pod control
// records them.
const (
	SuccessfulCreate = "SuccessfulCreate"
	FailedCreate     = "FailedCreate"
	SuccessfulDelete = "SuccessfulDelete"
	FailedDelete     = "FailedDelete"
)

// PodControl is the client-go [reconcile.PodClient],
// [reconcile.PodStamper] and [reconcile.PodGetter]:
// it creates, deletes, patches and reads pods with Client and records an
// event on the pod's controller for every create and delete outcome
// FailedCreate (not when the namespace is terminating),
// SuccessfulCreate, FailedDelete (not when the pod is already gone) and
// SuccessfulDelete. Client is required; Recorder may be nil (no events);
// Labels, nil by default (upstream), are stamped on every pod CreatePod
// creates, for a pod cache restricted to them: set them from
// [OwnedPods.Labels], the value whose [OwnedPods.Factory] gives the pod
// informer (docs/rules.md ). The zero value is not usable. It keeps
// no state and is safe for concurrent use. It never modifies the pods
// passed in.
//
// DeletePod deletes with a UID precondition; see its documentation for why.
// The controller-runtime adapter (package ctrlruntime) has the same
// semantics.
type PodControl struct {
	Client   kubernetes.Interface
	Recorder record.EventRecorder

	// EventPerBatch, beyond upstream, records one SuccessfulCreate event
	// per slow-start batch ("Created 4 pods: a, b, c, d") instead of one
	// per pod, through [PodControl.CreatedBatch]: a scale-up of 10 pods
	// makes 4 events instead of 10. Failure events stay one per pod. False
	// (the zero value) is upstream's one event per pod.
	EventPerBatch bool

	// Labels are added to every pod CreatePod creates (the pod passed in
	// is not modified). A template that sets one of these keys to another
	// value fails the create before any API call (a FailedCreate event and
	// the error). Deliberate difference from upstream, which creates pods
	// with the template's labels only; nil: none added. Set them from
	// [OwnedPods.Labels]; the map must not be modified while the
	// PodControl is in use.
	Labels map[string]string
}

var (
	_ reconcile.PodClient     = PodControl{}
	_ reconcile.BatchReporter = PodControl{}
	_ reconcile.PodStamper    = PodControl{}
	_ reconcile.PodGetter     = PodControl{}
)

// PodStamp returns Labels, the map CreatePod stamps on every pod it
// creates, whatever the owner (nil: none), for the Controller's checks of
// the owner's selector against the stamp and its restamping of a pod that
// lost it. The map is Labels itself, not a copy: it must not be modified.
func (c PodControl) PodStamp(metav1.Object) map[string]string {
	return c.Labels
}

// GetPod reads the pod namespace/name from the API server through Client
// (a live read, no cache). A missing pod is an error for which
// apierrors.IsNotFound holds; errors are returned as they are.
func (c PodControl) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return c.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// CreatePod creates pod in its namespace and returns the created pod, with
// the name the API server generated from GenerateName, and with Labels
// added. Create errors are returned as they are.
func (c PodControl) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	stamped, err := podops.Stamp(pod, c.Labels)
	if err != nil {
		err = fmt.Errorf("clientgo: CreatePod: %w", err)
		c.event(pod, corev1.EventTypeWarning, FailedCreate, "Error creating: %v", err)
		return nil, err
	}
	created, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, stamped, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.event(pod, corev1.EventTypeWarning, FailedCreate, "Error creating: %v", err)
		}
		return nil, err
	}
	if !c.EventPerBatch {
		c.event(created, corev1.EventTypeNormal, SuccessfulCreate, "Created pod: %v", created.Name)
	}
	return created, nil
}

// CreatedBatch records, under EventPerBatch only, one SuccessfulCreate
// event for the pods one slow-start batch created, on their controller
// (the Manager calls it, see [reconcile.BatchReporter]). Without
// EventPerBatch it does nothing: CreatePod has recorded one per pod.
func (c PodControl) CreatedBatch(_ context.Context, created []*corev1.Pod) {
	if !c.EventPerBatch || len(created) == 0 {
		return
	}
	c.event(created[0], corev1.EventTypeNormal, SuccessfulCreate, "%s", podops.BatchMessage(created))
}

// DeletePod deletes pod, only if the object under its name still has
// pod.UID (a UID precondition).
//
// Deliberate difference from upstream, which deletes by name only: the pod
// was chosen by its rank among the owner's pods from a cache that may be
// stale; if it has been deleted and another pod created under the same name
// since (a user or another controller reusing names), a delete by name would
// remove a pod nobody chose. With the precondition the API server refuses
// (409 Conflict); DeletePod reports that as NotFound, because to the caller
// it means exactly what NotFound means: the chosen pod is already gone. The
// [reconcile.Manager] then lowers the deletion expectation at once, as for a
// pod deleted by someone else, and no FailedDelete event is recorded. Other
// errors are returned as they are and recorded as FailedDelete.
func (c PodControl) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	uid := pod.UID
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := c.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)
	return c.deleted(pod, podops.PreconditionAsNotFound(pod, err))
}

func (c PodControl) deleted(pod *corev1.Pod, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return err
	case err != nil:
		c.event(pod, corev1.EventTypeWarning, FailedDelete, "Error deleting: %v", err)
		return err
	}
	c.event(pod, corev1.EventTypeNormal, SuccessfulDelete, "Deleted pod: %v", pod.Name)
	return nil
}

// PatchPod applies the strategic-merge patch data to pod (adoption and
// release, R-12.2) and returns the patched pod. Errors are returned as
// they are; the Controller swallows NotFound and, for a release, Invalid.
func (c PodControl) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	return c.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
}

// event records an event on the controller of pod.
func (c PodControl) event(pod *corev1.Pod, eventType, reason, format string, args ...any) {
	ref := metav1.GetControllerOf(pod)
	if c.Recorder == nil || ref == nil {
		return
	}
	c.Recorder.Eventf(&corev1.ObjectReference{
		APIVersion: ref.APIVersion,
		Kind:       ref.Kind,
		Name:       ref.Name,
		UID:        ref.UID,
		Namespace:  pod.Namespace,
	}, eventType, reason, format, args...)
}
