package perpod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodKeys maps a pod to the keys of the [Tracker] under which its creation
// and deletion are expected: what a pod event handler observes for it
// ([Tracker.CreationObserved] on an add, [Tracker.DeletionObserved] on a
// delete). Nil or
// empty means none: the pod's events move no expectation, as upstream's
// orphans. The adapters' TrackPods (clientgo and ctrlruntime)
// take one to wire a Tracker to pod events.
//
// A PodKeys must not modify the pod and must be safe for concurrent use:
// informers call it from their handlers' goroutines. It should return each
// key once and a slice the caller may keep; the constructors' do, and return
// a new slice on every call.
type PodKeys func(pod *corev1.Pod) []string

// KeysByOwner returns the PodKeys of a controller that keys expectations
// by owner, and by pod group within an owner when groupLabel is set.
//
// With groupLabel "", as upstream's ReplicaSet controller keys them: a pod
// whose controller owner reference has kind ownerKind maps to the owner's
// key, "namespace/name" with the pod's namespace ("name" alone when the
// pod has none, R-1.7). With a groupLabel, as operators with several
// groups of pods per owner key them: such a pod that also carries the
// label maps to "namespace/name/" followed by the label's value (which may
// be empty), and one without the label maps to none. The keys of one owner
// then share the prefix "namespace/name/", which [Tracker.KeysWithPrefix]
// and [Tracker.DeletePrefix] take. Any other pod (no owner reference, none
// marked controller, another kind, a reference without a name, a nil pod)
// maps to none. ownerKind "" accepts a controller of any kind.
//
// Unlike upstream, which reads the owner from its cache and also compares
// the reference's UID, it resolves the reference by kind and name
// alone: a PodKeys has no owner cache. A pod still controlled by a deleted
// owner therefore maps to the key of a new owner of the same name. That
// changes nothing for the pods a Tracker expects, since a pod key names
// one pod at a time; forget a deleted owner's keys (Delete, DeletePrefix)
// when its owner goes. Like upstream, it ignores the reference's
// APIVersion.
func KeysByOwner(ownerKind, groupLabel string) PodKeys {
	return func(pod *corev1.Pod) []string {
		owner, ok := ownerKey(pod, ownerKind)
		if !ok {
			return nil
		}
		if groupLabel == "" {
			return []string{owner}
		}
		group, ok := pod.Labels[groupLabel]
		if !ok {
			return nil
		}
		return []string{owner + "/" + group}
	}
}

// ownerKey returns the key of pod's controller, if it has one of kind
// (any kind for "") with a name.
func ownerKey(pod *corev1.Pod, kind string) (string, bool) {
	if pod == nil {
		return "", false
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Name == "" || (kind != "" && ref.Kind != kind) {
		return "", false
	}
	if pod.Namespace == "" {
		return ref.Name, true
	}
	return pod.Namespace + "/" + ref.Name, true
}
