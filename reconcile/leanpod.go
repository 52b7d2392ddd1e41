package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/podrank"
)

// LeanPod returns a new pod holding only what the library's rules read of
// p, for a pod cache that no other code reads (docs/rules.md, R-13.6):
//
//   - metadata: name, namespace, UID, resourceVersion, labels, owner
//     references, creation and deletion timestamps, and of the annotations
//     only the deletion cost;
//   - spec: nodeName and, of the init containers, the name
//     and restartPolicy of each native sidecar (restartPolicy Always, R-6.12);
//   - status: phase, the first Ready condition's type,
//     status and lastTransitionTime, and the name and
//     restartCount of each container status and of each sidecar's init
//     container status.
//
// Everything else is dropped: containers, volumes, environment, the other
// conditions, IPs, managed fields, finalizers, generateName, type meta …
// Every rule of the library — activity and termination, readiness and
// availability, the deletion ranking, the status counts, claiming (adoption
// and release) and the pod event handlers — gives the same answer on
// LeanPod(p) as on p, and LeanPod(LeanPod(p)) equals LeanPod(p), as an
// informer transform must be idempotent. Code of the caller that reads
// other fields of the cached pods (a Config.Status reading container
// images, another controller sharing the cache) would see them empty: use
// it only on a cache of its own.
//
// LeanPod never modifies p; the result shares no memory with it. A nil p
// gives nil. It is a pure function, safe for concurrent use.
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
