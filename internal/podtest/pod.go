package podtest

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Epoch is a fixed, non-zero instant tests measure time from.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Option changes a pod under construction.
type Option func(*corev1.Pod)

// New returns a Running pod in namespace "default" named name, with UID
// "uid-"+name, created at Epoch, then applies opts in order.
func New(name string, opts ...Option) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         "default",
			Name:              name,
			UID:               types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(Epoch),
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Namespace sets the namespace.
func Namespace(ns string) Option { return func(p *corev1.Pod) { p.Namespace = ns } }

// UID sets the UID.
func UID(uid string) Option { return func(p *corev1.Pod) { p.UID = types.UID(uid) } }

// Node sets spec.nodeName.
func Node(n string) Option { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

// Phase sets status.phase.
func Phase(ph corev1.PodPhase) Option { return func(p *corev1.Pod) { p.Status.Phase = ph } }

// Created sets the creation timestamp (the zero time clears it).
func Created(t time.Time) Option {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

// Ready appends a Ready=True condition that last transitioned at since.
func Ready(since time.Time) Option {
	return Condition(corev1.PodReady, corev1.ConditionTrue, since)
}

// NotReady appends a Ready=False condition.
func NotReady() Option { return Condition(corev1.PodReady, corev1.ConditionFalse, time.Time{}) }

// Condition appends a pod condition.
func Condition(t corev1.PodConditionType, s corev1.ConditionStatus, ltt time.Time) Option {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: t, Status: s, LastTransitionTime: metav1.NewTime(ltt),
		})
	}
}

// Labels merges labels into the pod's labels.
func Labels(kv map[string]string) Option {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for k, v := range kv {
			p.Labels[k] = v
		}
	}
}

// Annotation sets one annotation.
func Annotation(k, v string) Option {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

// DeletionCost sets the pod-deletion-cost annotation to v verbatim.
func DeletionCost(v string) Option {
	return Annotation("controller.kubernetes.io/pod-deletion-cost", v)
}

// Deleting sets the deletion timestamp.
func Deleting(t time.Time) Option {
	return func(p *corev1.Pod) { d := metav1.NewTime(t); p.DeletionTimestamp = &d }
}

// Restarts appends a container status with the given restart count.
func Restarts(n int32) Option {
	return func(p *corev1.Pod) {
		name := "c" + string(rune('0'+len(p.Status.ContainerStatuses)))
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: name, RestartCount: n})
	}
}

// InitRestarts declares an init container named name (a native sidecar when
// sidecar is true) and appends its status with n restarts.
func InitRestarts(name string, sidecar bool, n int32) Option {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: name}
		if sidecar {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses,
			corev1.ContainerStatus{Name: name, RestartCount: n})
	}
}

// ControlledBy adds a controller ownerRef (controller and blockOwnerDeletion
// true) to owner.
func ControlledBy(owner metav1.Object, gvkKind, apiVersion string) Option {
	return func(p *corev1.Pod) {
		t := true
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
			APIVersion: apiVersion, Kind: gvkKind, Name: owner.GetName(), UID: owner.GetUID(),
			Controller: &t, BlockOwnerDeletion: &t,
		})
	}
}

// ResourceVersion sets metadata.resourceVersion.
func ResourceVersion(rv string) Option { return func(p *corev1.Pod) { p.ResourceVersion = rv } }
