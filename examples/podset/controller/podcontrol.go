package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// PodControl is the controller-runtime [reconcile.PodControl]: it creates and
// deletes pods through a client.Client and records an event (new events API)
// on the pod's controller for each outcome (a delete that finds the pod gone
// records none). Client is required; Recorder may be nil. It is safe for
// concurrent use.
type PodControl struct {
	Client   client.Client
	Recorder events.EventRecorder
}

var _ reconcile.PodControl = PodControl{}

// CreatePod creates pod; the client fills in the created state (name,
// UID, resourceVersion) and the pod is returned.
func (c PodControl) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if err := c.Client.Create(ctx, pod); err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.event(pod, corev1.EventTypeWarning, "FailedCreate", "Create", "Error creating: %v", err)
		}
		return nil, err
	}
	c.event(pod, corev1.EventTypeNormal, "SuccessfulCreate", "Create", "Created pod: %v", pod.Name)
	return pod, nil
}

// DeletePod deletes pod (only if it still has the same UID). pod is not
// modified: the client is given a copy of its name and namespace.
func (c PodControl) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	err := c.Client.Delete(ctx, target, client.Preconditions{UID: &pod.UID})
	switch {
	case apierrors.IsNotFound(err):
		return err
	case err != nil:
		c.event(pod, corev1.EventTypeWarning, "FailedDelete", "Delete", "Error deleting: %v", err)
		return err
	}
	c.event(pod, corev1.EventTypeNormal, "SuccessfulDelete", "Delete", "Deleted pod: %v", pod.Name)
	return nil
}

func (c PodControl) event(pod *corev1.Pod, eventType, reason, action, note string, args ...any) {
	ref := metav1.GetControllerOf(pod)
	if c.Recorder == nil || ref == nil {
		return
	}
	owner := &corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Namespace: pod.Namespace}
	c.Recorder.Eventf(owner, nil, eventType, reason, action, note, args...)
}
