package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// related returns the pods for the deletion rank: Config.Related, or
// upstream's getIndirectlyRelatedPods.
func (c *Controller[T]) related(ctx context.Context, obj T, o *Owner) ([]*corev1.Pod, error) {
	if c.cfg.Related != nil {
		return c.cfg.Related(ctx, obj)
	}
	ref := controllerOf(obj)
	if ref == nil {
		return nil, nil // a bare owner: every rank 0
	}
	namespace := obj.GetNamespace()
	owners, err := c.siblings(namespace, ref.UID)
	if err != nil {
		return nil, ownerErrorf(o.Key, "listing owners for related pods: %w", err)
	}
	var pods, out []*corev1.Pod
	listed := false
	seen := make(map[string]struct{})
	for _, sib := range owners {
		if isNilValue(sib) {
			continue
		}
		if r := controllerOf(sib); r == nil || r.UID != ref.UID {
			continue
		}
		so, err := c.cfg.Describe(sib)
		if err != nil {
			continue
		}
		sel, err := selectorOf(so.Selector)
		if err != nil {
			continue // upstream skips an invalid selector
		}
		if !listed {
			if pods, err = c.cfg.Cluster.Pods.List(namespace); err != nil {
				return nil, ownerErrorf(o.Key, "listing pods for related pods: %w", err)
			}
			listed = true
		}
		for _, p := range pods {
			if p == nil || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			if _, dup := seen[string(p.UID)]; dup {
				continue
			}
			seen[string(p.UID)] = struct{}{}
			out = append(out, p)
		}
	}
	return out, nil
}

// controllerOf returns obj's controller ownerRef, or nil.
func controllerOf(obj metav1.Object) *metav1.OwnerReference {
	return metav1.GetControllerOfNoCopy(obj)
}
