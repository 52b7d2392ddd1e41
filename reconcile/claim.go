package reconcile

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// claim is the result of claiming an owner's pods in one sync.
type claim struct {
	active      []*corev1.Pod // owned and matching, plus adopted orphans
	terminating []*corev1.Pod // owned, matching and terminating
	adopted     []*corev1.Pod // as the patcher returned them
	released    []*corev1.Pod // the caller's pods that were released
}

// claimer claims the pods of one owner in one sync.
// It re-reads the owner live at most once, before the first adoption.
type claimer[T Object] struct {
	c        *Controller[T]
	owner    T
	key      string
	selector labels.Selector
	// stamp is what the pod client stamps on the owner's pods
	// ([PodStamper]); an adopted orphan that lacks a label of it gets it in
	// the adoption patch.
	stamp map[string]string

	checked  bool
	checkErr error

	// gate asks Config.Fence before each patch; after a refusal the claim
	// stops.
	gate fenceGate
}

// claimPods splits all (the owner's pods and the namespace's orphans, as
// podsOf returns them; any other pod is skipped) into the owner's
// active and terminating pods, adopting and releasing on the way:
//   - pods controlled by another object (a different UID) are ignored;
//   - active pods the owner controls are kept while they match the
//     selector, released otherwise — unless the owner is being deleted, in
//     which case they are neither kept nor released;
//   - active orphans in the owner's namespace that match are adopted, unless
//     the owner is being deleted; before the first adoption the owner is
//     re-read live (Owners.GetLive), once: if that fails, or shows the owner
//     being deleted or recreated (another UID), no orphan is adopted in this
//     sync and that error is reported once;
//   - terminating pods are only counted: those the owner controls and that
//     match; terminal pods are ignored.
//
// An adoption or release that meets NotFound (the pod is gone), or a
// release that meets Invalid (the pod was replaced or no longer refers to
// the owner), is not an error. Every pod is visited; the errors are joined.
// A patch the fence refuses is not made and the claim stops there: no
// further pod is visited and the refusal is among the errors.
func (cl *claimer[T]) claimPods(ctx context.Context, all []*corev1.Pod) (claim, error) {
	var (
		out  claim
		errs []error
	)
	// Most of all are usually the owner's active pods: one allocation
	// instead of a slice doubled up to their number in every sync.
	out.active = make([]*corev1.Pod, 0, len(all))
	owner := cl.owner
	uid := owner.GetUID()
	deleting := owner.GetDeletionTimestamp() != nil
	for _, pod := range all {
		if pod == nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref != nil && ref.UID != uid {
			continue // someone else's
		}
		matches := cl.selector.Matches(labels.Set(pod.Labels))
		if !podrank.IsActive(pod) {
			if ref != nil && matches && podrank.IsTerminating(pod) {
				out.terminating = append(out.terminating, pod)
			}
			continue
		}
		if ref != nil {
			switch {
			case matches:
				out.active = append(out.active, pod)
			case deleting:
				// Kept out, not released: releasing requires an owner that
				// is not going away.
			default:
				if err := cl.gate.allow("releasing pod " + PodKey(pod)); err != nil {
					return out, errors.Join(append(errs, err)...)
				}
				if err := cl.release(ctx, pod); err != nil {
					errs = append(errs, err)
				} else {
					out.released = append(out.released, pod)
				}
			}
			continue
		}
		if deleting || !matches || pod.DeletionTimestamp != nil {
			continue
		}
		if ns := owner.GetNamespace(); ns != "" && ns != pod.Namespace {
			continue
		}
		if err := cl.canAdopt(ctx); err != nil {
			continue // reported once, below
		}
		if err := cl.gate.allow("adopting pod " + PodKey(pod)); err != nil {
			return out, errors.Join(append(errs, err)...)
		}
		adopted, err := cl.adopt(ctx, pod)
		switch {
		case apierrors.IsNotFound(err):
			// gone: nothing to adopt
		case err != nil:
			errs = append(errs, err)
		default:
			// The pod as adopted, with its controller reference: a delete
			// in this sync records its event against the owner.
			out.active = append(out.active, adopted)
			out.adopted = append(out.adopted, adopted)
		}
	}
	if cl.checkErr != nil {
		errs = append(errs, cl.checkErr)
	}
	return out, errors.Join(errs...)
}

// canAdopt re-reads the owner from the API server once per sync: an owner
// that is gone, recreated or being deleted must not adopt.
func (cl *claimer[T]) canAdopt(ctx context.Context) error {
	if cl.checked {
		return cl.checkErr
	}
	cl.checked = true
	owner := cl.owner
	fresh, err := cl.c.cfg.Cluster.Owners.GetLive(ctx, owner.GetNamespace(), owner.GetName())
	switch {
	case err != nil:
		cl.checkErr = ownerErrorf(cl.key, "cannot adopt pods: re-reading the owner: %w", err)
	case isNilValue(fresh):
		cl.checkErr = ownerErrorf(cl.key, "cannot adopt pods: Owners.GetLive returned no owner")
	case fresh.GetUID() != owner.GetUID():
		cl.checkErr = ownerErrorf(cl.key, "cannot adopt pods: the owner is gone (uid %s now, %s cached)", fresh.GetUID(), owner.GetUID())
	case fresh.GetDeletionTimestamp() != nil:
		cl.checkErr = ownerErrorf(cl.key, "cannot adopt pods: the owner is being deleted")
	}
	return cl.checkErr
}

// adopt patches pod to be controlled by the owner. The pod UID in the patch
// makes it fail if the pod was replaced under the same name. An orphan
// that lacks a label of the stamp gets the stamp in the same patch
// with sharding, an orphan of another bucket of the shard is
// moved to its new owner's bucket, so it follows the owner when K changes.
func (cl *claimer[T]) adopt(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	var stamp map[string]string
	if !hasLabels(pod.Labels, cl.stamp) {
		stamp = cl.stamp
	}
	data, err := adoptPatchBytes(pod.UID, cl.c.cfg.Kind, cl.owner, stamp)
	if err != nil {
		return nil, err
	}
	patched, err := cl.c.cfg.Cluster.PodClient.PatchPod(ctx, pod, data)
	if err != nil {
		return nil, ownerErrorf(cl.key, "adopting pod %s: %w", PodKey(pod), err)
	}
	if patched == nil {
		patched = pod
	} else if rv := patched.ResourceVersion; rv != "" {
		// adoptions are the controller's writes (releases are not).
		cl.c.gate.Wrote(cl.key, cl.owner.GetUID(), expectations.PodsResource, rv)
	}
	return patched, nil
}

// release patches pod to drop the owner's ownerRef. NotFound and Invalid
// mean there is nothing left to release.
func (cl *claimer[T]) release(ctx context.Context, pod *corev1.Pod) error {
	data, err := releasePatchBytes(pod.UID, cl.owner.GetUID())
	if err != nil {
		return err
	}
	_, err = cl.c.cfg.Cluster.PodClient.PatchPod(ctx, pod, data)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return ownerErrorf(cl.key, "releasing pod %s: %w", PodKey(pod), err)
}

// adoptPatch and releasePatch are the JSON shapes of the two patches.
type adoptPatch struct {
	Metadata struct {
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
		UID             types.UID               `json:"uid"`
		Labels          map[string]string       `json:"labels,omitempty"`
	} `json:"metadata"`
}

type releasePatch struct {
	Metadata struct {
		UID             types.UID           `json:"uid"`
		OwnerReferences []map[string]string `json:"ownerReferences"`
	} `json:"metadata"`
}

// adoptPatchBytes returns the strategic-merge patch that makes the pod with UID
// podUID controlled by owner: it adds a controller ownerRef with
// blockOwnerDeletion to owner (kind from kind) and carries the pod's UID as a
// precondition, so it fails if the pod was replaced under the same name:
//
//	{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"…","controller":true,"blockOwnerDeletion":true}],"uid":"<pod uid>"}}
//
// Without stamp it is upstream's adoption patch. With stamp (labels the
// pod lacks of its new owner's stamp, R-13.7) the patch also sets them:
//
//	{"metadata":{"ownerReferences":[…],"uid":"<pod uid>","labels":{"<key>":"<value>"}}}
func adoptPatchBytes(podUID types.UID, kind schema.GroupVersionKind, owner metav1.Object, stamp map[string]string) ([]byte, error) {
	if isNil(owner) {
		return nil, errors.New("reconcile: adoption patch: nil owner")
	}
	var p adoptPatch
	p.Metadata.UID = podUID
	p.Metadata.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, kind)}
	p.Metadata.Labels = stamp
	return json.Marshal(&p)
}

// releasePatchBytes returns the strategic-merge patch that removes the ownerRef
// with ownerUID from the pod with UID podUID, with the pod's UID as
// a precondition:
//
//	{"metadata":{"uid":"<pod uid>","ownerReferences":[{"$patch":"delete","uid":"<owner uid>"}]}}
//
// It is upstream's release patch.
func releasePatchBytes(podUID, ownerUID types.UID) ([]byte, error) {
	var p releasePatch
	p.Metadata.UID = podUID
	p.Metadata.OwnerReferences = []map[string]string{{"$patch": "delete", "uid": string(ownerUID)}}
	return json.Marshal(&p)
}
