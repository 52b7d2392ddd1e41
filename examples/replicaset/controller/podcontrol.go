package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Event reasons, as upstream's pod control emits them.
const (
	SuccessfulCreate = "SuccessfulCreate"
	FailedCreate     = "FailedCreate"
	SuccessfulDelete = "SuccessfulDelete"
	FailedDelete     = "FailedDelete"
)

// PodControl is the client-go [reconcile.PodControl]: it creates and deletes
// pods with a clientset and records an event on the pod's controller for
// every outcome (a delete that finds the pod gone records none, as
// upstream). The zero value is not usable; Client is required, Recorder may
// be nil. It is safe for concurrent use.
type PodControl struct {
	Client   kubernetes.Interface
	Recorder record.EventRecorder
}

var _ reconcile.PodControl = PodControl{}

// CreatePod creates pod in its namespace and returns the created pod.
func (c PodControl) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	created, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.event(pod, corev1.EventTypeWarning, FailedCreate, "Error creating: %v", err)
		}
		return nil, err
	}
	c.event(created, corev1.EventTypeNormal, SuccessfulCreate, "Created pod: %v", created.Name)
	return created, nil
}

// DeletePod deletes pod.
func (c PodControl) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	err := c.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
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

// event records an event on the controller of pod (its ReplicaSet).
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
