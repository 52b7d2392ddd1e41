package reconcile

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/rv"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// recheckVanished reads live, before the owner's missing pods are
// replaced, the controlled pods that left the pod cache without a
// deletion timestamp: a label-selected watch reports a pod that
// lost the selected labels as deleted, while it runs on. At most want of
// them are read (the pods the sync would create); the others wait for a
// later sync. A pod that is gone, replaced, no longer controlled by the
// owner, or no longer active was really lost: it is dropped. One the
// owner's selector no longer matches is released, as upstream's claim
// would. One that lacks a label of stamp gets it back (a patch, fenced).
// Either way a pod that still exists, is controlled by the owner and
// matches is held: it counts against the pods to create, and is checked
// again by later syncs until the cache shows it. Without a [PodGetter]
// (or with one that answers errors.ErrUnsupported, or Forbidden: RBAC
// without get on pods) the pods are taken as gone, as upstream's view of a
// deletion. listed are the pods the sync
// read: a pod among them is back in the cache and needs no check. unseen
// are the held pods that carry the stamp and that the cache has passed
// without showing them: it cannot see them. suspect are the
// other held pods that carry the stamp, that the Controller created and
// has never seen in its cache. A pod that lost the stamp is neither: it is
// stamped back, and judged by a later sync.
func (c *Controller[T]) recheckVanished(ctx context.Context, key string, owner T, selector labels.Selector, stamp map[string]string, listed []*corev1.Pod, want int) (held int, unseen, suspect, restamped []*corev1.Pod, err error) {
	vanished := c.breaker.takeVanished(key)
	if len(vanished) == 0 {
		return 0, nil, nil, nil, nil
	}
	getter, ok := c.cfg.Cluster.PodClient.(PodGetter)
	if !ok {
		return 0, nil, nil, nil, nil
	}
	cacheRV := c.podCacheVersion()
	inCache := make(map[types.UID]bool, len(listed))
	for _, p := range listed {
		if p != nil {
			inCache[p.UID] = true
		}
	}
	var (
		keep []vanishedPod
		errs []error
	)
	gate := fenceGate{fence: c.cfg.Fence, key: key}
	for i, v := range vanished {
		p := v.pod
		if inCache[p.UID] {
			continue
		}
		if held >= want || gate.refusal() != nil {
			keep = append(keep, vanished[i:]...)
			break
		}
		live, gerr := getter.GetPod(ctx, p.Namespace, p.Name)
		switch {
		case errors.Is(gerr, errors.ErrUnsupported):
			c.noLiveReads.Store(true)
			return 0, nil, nil, nil, nil
		case apierrors.IsForbidden(gerr):
			// No permission to read pods (RBAC without get): the pod is
			// taken as gone, upstream's view, rather than held forever.
			c.breaker.withdraw(key, p.UID)
			continue
		case apierrors.IsNotFound(gerr):
			c.breaker.withdraw(key, p.UID) // gone: no evidence against the cache
			continue
		case gerr != nil:
			// Unknown: hold it rather than risk a replacement, and retry.
			held++
			keep = append(keep, v)
			errs = append(errs, ownerErrorf(key, "reading pod %s that left the pod cache: %w", PodKey(p), gerr))
			continue
		case live == nil, live.UID != p.UID, !controlledBy(live, owner.GetUID()), !podrank.IsActive(live):
			c.breaker.withdraw(key, p.UID) // really lost: replace it
			continue
		}
		if !selector.Matches(labels.Set(live.Labels)) {
			if err := gate.allow("releasing pod " + PodKey(live)); err != nil {
				errs = append(errs, err)
				keep = append(keep, vanished[i+1:]...)
				break
			}
			cl := claimer[T]{c: c, owner: owner, key: key}
			if err := cl.release(ctx, live); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		held++
		keep = append(keep, vanishedPod{pod: live, created: v.created, overdue: v.overdue})
		if hasLabels(live.Labels, stamp) {
			// Stamped, yet not in the cache: either the cache is behind
			// this version of the pod, or it cannot see it at all.
			switch {
			case passed(cacheRV, live.ResourceVersion) || (cacheRV == "" && v.overdue && live.ResourceVersion == p.ResourceVersion):
				unseen = append(unseen, live)
			case v.created:
				suspect = append(suspect, live)
			}
			continue
		}
		if err := gate.allow("putting the stamp back on pod " + PodKey(live)); err != nil {
			errs = append(errs, err)
			keep = append(keep, vanished[i+1:]...)
			break
		}
		patched, err := c.restamp(ctx, key, owner, live, stamp)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		restamped = append(restamped, patched)
		// Judged again by its patched version: a cache that passes it
		// and still does not show the pod cannot see it.
		keep[len(keep)-1].pod = patched
	}
	c.breaker.keepVanished(key, keep)
	return held, unseen, suspect, restamped, errors.Join(errs...)
}

// passed reports whether a cache at cacheRV has applied a write at
// resourceVersion; false when either is unknown or not comparable.
func passed(cacheRV, resourceVersion string) bool {
	if cacheRV == "" || resourceVersion == "" {
		return false
	}
	cmp, err := rv.Compare(cacheRV, resourceVersion)
	return err == nil && cmp >= 0
}

// restamp patches the labels of stamp back onto pod, with its UID as a
// precondition, and records the write for the consistency gate.
func (c *Controller[T]) restamp(ctx context.Context, key string, owner T, pod *corev1.Pod, stamp map[string]string) (*corev1.Pod, error) {
	data, err := restampPatchBytes(pod.UID, stamp)
	if err != nil {
		return nil, err
	}
	patched, err := c.cfg.Cluster.PodClient.PatchPod(ctx, pod, data)
	if err != nil {
		return nil, ownerErrorf(key, "putting the stamp back on pod %s: %w", PodKey(pod), err)
	}
	if patched == nil {
		return pod, nil
	}
	if rv := patched.ResourceVersion; rv != "" {
		c.gate.Wrote(key, owner.GetUID(), expectations.PodsResource, rv)
	}
	return patched, nil
}

// restampPatch is the JSON shape of the patch that puts a stamp back.
type restampPatch struct {
	Metadata struct {
		UID    types.UID         `json:"uid"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

// restampPatchBytes returns the strategic-merge patch that sets the labels
// of stamp on the pod with UID podUID, failing if the pod was replaced
// under the same name:
//
//	{"metadata":{"uid":"<pod uid>","labels":{"<key>":"<value>"}}}
func restampPatchBytes(podUID types.UID, stamp map[string]string) ([]byte, error) {
	var p restampPatch
	p.Metadata.UID = podUID
	p.Metadata.Labels = stamp
	return json.Marshal(&p)
}

// hasLabels reports whether m carries every label of want.
func hasLabels(m, want map[string]string) bool {
	for k, v := range want {
		if have, ok := m[k]; !ok || have != v {
			return false
		}
	}
	return true
}
