package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// LeanPod returns a new pod holding only what the library's rules read of
// p (docs/rules.md, R-13.6): name, namespace, UID, resourceVersion, labels,
// owner references, timestamps and the deletion-cost annotation; nodeName;
// the phase and the Ready condition; and the highest restart count of the
// containers and of the native sidecars, each kept only when above 0, in
// one nameless container status or one sidecar. Every rule of the library
// answers the same on LeanPod(p) as on p, and LeanPod is idempotent, as an
// informer transform must be. Use it only on a pod cache no other code
// reads: the dropped fields (containers, volumes, other conditions …) would
// read as empty. It never modifies p and the result shares no memory with
// it; a nil p gives nil. It is safe for concurrent use. The fields kept,
// each with the rule that reads it: docs/design/lean-caches.md.
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
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == corev1.PodReady { // only the first counts
			lean.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}}
			break
		}
	}
	keepRestarts(lean, p)
	return lean
}

// keepRestarts gives lean the two restart counts the deletion ranking reads
// of p, in as little memory as a *corev1.Pod allows: one nameless
// container status carrying the highest regular count, and one sidecar (an
// init container that restarts Always, with its status) carrying the
// highest sidecar count, each only when that count is above 0, as an absent
// count reads 0. A pod whose containers never restarted keeps no container
// status at all. Applied to its own result it gives the same pod.
func keepRestarts(lean, p *corev1.Pod) {
	regular, sidecar := podutil.MaxRestarts(p)
	if regular > 0 {
		lean.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: regular}}
	}
	if sidecar == 0 {
		return
	}
	name := sidecarNamed(p, sidecar)
	always := corev1.ContainerRestartPolicyAlways
	lean.Spec.InitContainers = []corev1.Container{{Name: name, RestartPolicy: &always}}
	lean.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: name, RestartCount: sidecar}}
}

// sidecarNamed returns the name of an init container status of p that
// counts count restarts; MaxRestarts found one, so the name is a sidecar's.
func sidecarNamed(p *corev1.Pod, count int32) string {
	for i := range p.Status.InitContainerStatuses {
		s := &p.Status.InitContainerStatuses[i]
		if s.RestartCount == count && podutil.IsSidecar(p, s.Name) {
			return s.Name
		}
	}
	return ""
}
