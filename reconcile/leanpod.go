package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/podrank"
)

// LeanPod returns a new pod holding only what the library's rules read of
// p (docs/rules.md, R-13.6): name, namespace, UID, resourceVersion, labels,
// owner references, timestamps and the deletion-cost annotation; nodeName
// and the native sidecars; the phase, the Ready condition and the
// containers' restart counts. Every rule of the library answers the same on
// LeanPod(p) as on p, and LeanPod is idempotent, as an informer transform
// must be. Use it only on a pod cache no other code reads: the dropped
// fields (containers, volumes, other conditions …) would read as empty.
// It never modifies p and the result shares no memory with it; a nil p
// gives nil. It is safe for concurrent use. The fields kept, each with the
// rule that reads it: docs/design/lean-caches.md.
func LeanPod(p *corev1.Pod) *corev1.Pod {
	if p == nil {
		return nil
	}
	lean := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              p.Name,
			Namespace:         p.Namespace,
			UID:               p.UID,
			ResourceVersion:   p.ResourceVersion,
			CreationTimestamp: p.CreationTimestamp,
			Labels:            copyMap(p.Labels),
		},
		Spec:   corev1.PodSpec{NodeName: p.Spec.NodeName},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	if p.DeletionTimestamp != nil {
		t := *p.DeletionTimestamp
		lean.DeletionTimestamp = &t
	}
	if cost, ok := p.Annotations[podrank.DeletionCostAnnotation]; ok {
		lean.Annotations = map[string]string{podrank.DeletionCostAnnotation: cost}
	}
	if p.OwnerReferences != nil {
		lean.OwnerReferences = make([]metav1.OwnerReference, len(p.OwnerReferences))
		for i := range p.OwnerReferences {
			p.OwnerReferences[i].DeepCopyInto(&lean.OwnerReferences[i])
		}
	}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if isSidecar(c) {
			always := corev1.ContainerRestartPolicyAlways
			lean.Spec.InitContainers = append(lean.Spec.InitContainers, corev1.Container{Name: c.Name, RestartPolicy: &always})
		}
	}
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == corev1.PodReady { // only the first counts
			lean.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}}
			break
		}
	}
	if n := len(p.Status.ContainerStatuses); n > 0 {
		lean.Status.ContainerStatuses = make([]corev1.ContainerStatus, n)
		for i := range p.Status.ContainerStatuses {
			s := &p.Status.ContainerStatuses[i]
			lean.Status.ContainerStatuses[i] = corev1.ContainerStatus{Name: s.Name, RestartCount: s.RestartCount}
		}
	}
	for i := range p.Status.InitContainerStatuses {
		s := &p.Status.InitContainerStatuses[i]
		if hasSidecar(lean, s.Name) {
			lean.Status.InitContainerStatuses = append(lean.Status.InitContainerStatuses, corev1.ContainerStatus{Name: s.Name, RestartCount: s.RestartCount})
		}
	}
	return lean
}

// isSidecar reports whether c is a native sidecar: an init container that
// restarts Always.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// hasSidecar reports whether p declares a sidecar named name.
func hasSidecar(p *corev1.Pod, name string) bool {
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == name {
			return true // LeanPod keeps sidecars only
		}
	}
	return false
}
