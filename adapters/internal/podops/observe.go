package podops

import (
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations/perpod"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Observer records pod events in a per-pod Tracker under the keys Keys
// maps each pod to, as upstream's ReplicaSet controller records them under
// its owner's key. A nil Tracker or nil Keys records
// nothing. Both adapters' TrackPods use it, so their semantics cannot drift
// apart.
type Observer struct {
	Tracker *perpod.Tracker
	Keys    perpod.PodKeys
}

// Added records an add event: a creation of pod under each of its keys, or,
// for a pod that already carries a deletion timestamp, a deletion.
func (o Observer) Added(pod *corev1.Pod) {
	if pod == nil {
		return
	}
	if pod.DeletionTimestamp != nil {
		o.Deleted(pod)
		return
	}
	podKey := reconcile.PodKey(pod)
	o.each(pod, func(key string) { o.Tracker.CreationObserved(key, podKey) })
}

// Updated records an update event from old to cur: nothing for a
// resync (equal resourceVersions) or for a pod not being deleted, whatever
// changed in its labels or owner references; a deletion of cur when cur
// carries a deletion timestamp, and of old too when the labels changed. A
// nil old is an add of cur.
func (o Observer) Updated(old, cur *corev1.Pod) {
	switch {
	case cur == nil:
		return
	case old == nil:
		o.Added(cur)
		return
	case old.ResourceVersion == cur.ResourceVersion || cur.DeletionTimestamp == nil:
		return
	}
	o.Deleted(cur)
	if !sameLabels(old.Labels, cur.Labels) {
		o.Deleted(old)
	}
}

// Deleted records a delete event, the possibly stale pod of a tombstone
// included: a deletion of pod under each of its keys.
func (o Observer) Deleted(pod *corev1.Pod) {
	if pod == nil {
		return
	}
	podKey := reconcile.PodKey(pod)
	o.each(pod, func(key string) { o.Tracker.DeletionObserved(key, podKey) })
}

// each calls fn with each key of pod. A key given twice settles nothing
// more the second time: the Tracker settles a pod key once.
func (o Observer) each(pod *corev1.Pod, fn func(key string)) {
	if o.Tracker == nil || o.Keys == nil {
		return
	}
	for _, key := range o.Keys(pod) {
		fn(key)
	}
}

// SplitPodKey returns the namespace and name of a pod key: "namespace/name",
// "/name" or "name" (the last two: no namespace). A key with more than one
// slash or no name is an error.
func SplitPodKey(podKey string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(podKey, "/")
	if !ok {
		namespace, name = "", podKey
	}
	if name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("malformed pod key %q: want namespace/name", podKey)
	}
	return namespace, name, nil
}

// sameLabels compares labels as upstream does (deep equality: a nil map
// differs from an empty one).
func sameLabels(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}
