package podops

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// StoppedEvents returns prev with CreationsStopped also recording a
// Warning event on the owner (kind, from its "namespace/name" key) with
// the condition's reason and the stop's message (docs/rules.md ). A
// nil recorder records nothing.
func StoppedEvents(prev reconcile.Hooks, recorder record.EventRecorder, kind schema.GroupVersionKind) reconcile.Hooks {
	if recorder == nil {
		return prev
	}
	h := prev
	stopped := prev.CreationsStopped
	h.CreationsStopped = func(key, reason, message string) {
		if stopped != nil {
			stopped(key, reason, message)
		}
		namespace, name, ok := strings.Cut(key, "/")
		if !ok {
			namespace, name = "", key
		}
		ref := &corev1.ObjectReference{APIVersion: kind.GroupVersion().String(), Kind: kind.Kind, Namespace: namespace, Name: name}
		recorder.Event(ref, corev1.EventTypeWarning, reason, message)
	}
	return h
}
