package reconcile

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// SyncRequest asks the caller to enqueue the owner Key, after After (0: now).
// It is what an informer event handler passes to its workqueue: Add(Key)
// when After is 0, AddAfter(Key, After) otherwise.
type SyncRequest struct {
	Key   string        // the owner's key, "namespace/name"
	After time.Duration // how long to wait before adding Key; 0 means at once
}

// PodAdded handles a pod add event. A pod that already carries a
// deletion timestamp is handled exactly as [Controller.PodDeleted]. A pod
// whose controller ownerRef resolves to an owner (kind Config.Kind.Kind,
// same name and UID in the cache, R-12.7) counts as that owner's creation
// (by pod key for tracked creations, by count otherwise) and enqueues the
// owner; under tracked creations, the add of an earlier pod under a name a
// retried create has made again (its first create's response was lost and
// it was deleted since) counts for nothing. An orphan never lowers expectations; it enqueues every owner of
// its namespace whose selector matches its labels. A nil pod yields nothing;
// the pod is never modified.
func (c *Controller[T]) PodAdded(pod *corev1.Pod) []SyncRequest {
	if pod == nil || !c.usable() {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		// Created and marked for deletion before the informer saw it: not a
		// creation.
		return c.PodDeleted(pod)
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		key, _, ok := c.resolve(pod.Namespace, ref)
		if !ok {
			return nil
		}
		if !c.manager.earlierIncarnation(key, pod) {
			c.tracker.CreationObservedKey(key, PodKey(pod))
			c.manager.observed(key, pod)
		}
		return []SyncRequest{{Key: key}}
	}
	return c.orphan(pod)
}

// PodUpdated handles a pod update event from old to cur:
//   - equal resourceVersions (a resync) do nothing;
//   - a deletion timestamp on cur is handled as [Controller.PodDeleted] of
//     cur, and of old too when the labels changed;
//   - a changed controller ownerRef enqueues the old owner if it resolves;
//   - a controlled pod enqueues its owner, plus a request after the owner's
//     MinReadySeconds when the pod just turned ready;
//   - an orphan whose labels or controller ref changed enqueues its matches.
//
// Apart from the deletion case, updates never touch expectations. A nil cur
// yields nothing; a nil old is handled as [Controller.PodAdded] of cur.
func (c *Controller[T]) PodUpdated(old, cur *corev1.Pod) []SyncRequest {
	if cur == nil || !c.usable() {
		return nil
	}
	if old == nil {
		return c.PodAdded(cur)
	}
	if old.ResourceVersion == cur.ResourceVersion {
		return nil
	}
	labelsChanged := !sameLabels(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		// The deletion counts once per key however many updates carry it
		// (the Tracker's key set, R-3.2).
		reqs := c.PodDeleted(cur)
		if labelsChanged {
			reqs = append(reqs, c.PodDeleted(old)...)
		}
		return reqs
	}
	var reqs []SyncRequest
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !sameRef(oldRef, curRef)
	if refChanged && oldRef != nil {
		if key, _, ok := c.resolve(old.Namespace, oldRef); ok {
			reqs = append(reqs, SyncRequest{Key: key})
		}
	}
	if curRef != nil {
		key, owner, ok := c.resolve(cur.Namespace, curRef)
		if !ok {
			return reqs
		}
		reqs = append(reqs, SyncRequest{Key: key})
		if !podutil.IsReady(old) && podutil.IsReady(cur) {
			if o, err := c.cfg.Describe(owner); err == nil && o.MinReadySeconds > 0 {
				// Availability comes MinReadySeconds after readiness, and
				// no event will announce it.
				reqs = append(reqs, SyncRequest{Key: key, After: time.Duration(o.MinReadySeconds) * time.Second})
			}
		}
		return reqs
	}
	if labelsChanged || refChanged {
		reqs = append(reqs, c.orphan(cur)...)
	}
	return reqs
}

// PodDeleted handles a pod delete event, including the possibly
// stale pod of a tombstone, which the caller (the adapter) unwraps. A pod
// whose controller resolves counts as that owner's deletion of its pod key
// (once per expected key) and enqueues the owner; other pods yield nothing.
func (c *Controller[T]) PodDeleted(pod *corev1.Pod) []SyncRequest {
	if pod == nil || !c.usable() {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return nil
	}
	key, _, ok := c.resolve(pod.Namespace, ref)
	if !ok {
		return nil
	}
	c.tracker.DeletionObserved(key, PodKey(pod))
	c.manager.observed(key, pod)
	c.breaker.left(key, pod)
	return []SyncRequest{{Key: key}}
}

// OwnerAdded handles an owner add event: it enqueues the owner.
func (c *Controller[T]) OwnerAdded(obj T) []SyncRequest {
	if isNilValue(obj) {
		return nil
	}
	return []SyncRequest{{Key: OwnerKey(obj.GetNamespace(), obj.GetName())}}
}

// OwnerUpdated handles an owner update event. When cur has a new
// UID under the same name (deleted and recreated between two events),
// everything remembered for the old incarnation is forgotten first, as
// [Controller.OwnerDeleted] does for old, so that it cannot hold back the
// new one. The owner is enqueued in any case.
func (c *Controller[T]) OwnerUpdated(old, cur T) []SyncRequest {
	if isNilValue(cur) {
		return nil
	}
	key := OwnerKey(cur.GetNamespace(), cur.GetName())
	if !isNilValue(old) && old.GetUID() != cur.GetUID() {
		oldKey := OwnerKey(old.GetNamespace(), old.GetName())
		if c.usable() {
			c.gate.Clear(oldKey, old.GetUID())
			c.forget(oldKey)
		}
		if oldKey != key {
			return []SyncRequest{{Key: oldKey}, {Key: key}}
		}
	}
	return []SyncRequest{{Key: key}}
}

// OwnerDeleted handles an owner delete event, with the possibly
// stale object of a tombstone, which the adapter unwraps: it forgets
// everything the Controller remembers for the owner's key — expectation
// counts, key sets and round evidence, names of unconfirmed creations —
// and enqueues the key (its Sync then finds the owner gone). The record of
// the controller's writes for the consistency gate is dropped only if it
// belongs to obj's UID: a record of an owner recreated under the
// same name survives the late delete event of its predecessor.
func (c *Controller[T]) OwnerDeleted(obj T) []SyncRequest {
	if isNilValue(obj) {
		return nil
	}
	key := OwnerKey(obj.GetNamespace(), obj.GetName())
	if c.usable() {
		c.gate.Clear(key, obj.GetUID())
		c.forget(key)
	}
	return []SyncRequest{{Key: key}}
}

// resolve returns the owner a controller ownerRef of a pod in namespace
// names: same kind (only the kind is compared, R-12.7), found in the cache,
// same UID — a pod of a deleted owner must not touch the expectations of a
// new owner with the same name.
func (c *Controller[T]) resolve(namespace string, ref *metav1.OwnerReference) (string, T, bool) {
	var zero T
	if ref.Kind != c.cfg.Kind.Kind {
		return "", zero, false
	}
	owner, err := c.cfg.Cluster.Owners.Get(namespace, ref.Name)
	if err != nil || isNilValue(owner) || owner.GetUID() != ref.UID {
		return "", zero, false
	}
	return OwnerKey(namespace, ref.Name), owner, true
}

// orphan enqueues every owner of the pod's namespace whose selector matches
// the pod's current labels. A pod without labels, and an
// owner with a nil, empty or invalid selector, match nothing.
func (c *Controller[T]) orphan(pod *corev1.Pod) []SyncRequest {
	if len(pod.Labels) == 0 {
		return nil
	}
	owners, err := c.cfg.Cluster.Owners.List(pod.Namespace)
	if err != nil {
		return nil
	}
	var reqs []SyncRequest
	set := labels.Set(pod.Labels)
	for _, owner := range owners {
		if isNilValue(owner) {
			continue
		}
		o, err := c.cfg.Describe(owner)
		if err != nil {
			continue
		}
		sel, err := selectorOf(o.Selector)
		if err != nil || sel.Empty() || !sel.Matches(set) {
			continue
		}
		reqs = append(reqs, SyncRequest{Key: OwnerKey(owner.GetNamespace(), owner.GetName())})
	}
	return reqs
}

// selectorOf converts a label selector; nil and empty select nothing.
func selectorOf(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		return labels.Nothing(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// sameLabels is deep equality: a nil and an empty map differ.
func sameLabels(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}

// sameRef compares two controller refs by value (both nil is equal).
func sameRef(a, b *metav1.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		equalBoolPtr(a.Controller, b.Controller) && equalBoolPtr(a.BlockOwnerDeletion, b.BlockOwnerDeletion)
}

func equalBoolPtr(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
