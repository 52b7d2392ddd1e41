package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/podrank"
)

// claimed is the result of claiming one ReplicaSet's pods.
type claimed struct {
	pods     []*corev1.Pod // owned and matching (any state), plus adopted orphans
	adopted  int
	released int
}

// claim returns the pods rs owns: from the pods of its
// namespace it ignores those controlled by someone else, keeps its own pods
// that match selector, releases its active pods that no longer match, and
// adopts active orphans that match — unless rs is being deleted, which a
// live GET re-checks before the first adoption. Terminating pods are never
// adopted or released; owned terminating pods count only while they match.
// Any adopt or release error aborts the sync.
func (c *Controller) claim(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, all []*corev1.Pod) (claimed, error) {
	var (
		out      claimed
		errs     []error
		checked  bool
		checkErr error
	)
	deleting := rs.DeletionTimestamp != nil
	for _, pod := range all {
		ref := metav1.GetControllerOf(pod)
		if ref != nil && ref.UID != rs.UID {
			continue // someone else's
		}
		matches := selector.Matches(labels.Set(pod.Labels))
		if ref != nil {
			switch {
			case matches:
				out.pods = append(out.pods, pod)
			case podrank.IsActive(pod) && !deleting:
				if err := c.release(ctx, rs, pod); err != nil {
					errs = append(errs, err)
				} else {
					out.released++
				}
			}
			continue
		}
		if !matches || deleting || !podrank.IsActive(pod) {
			continue
		}
		if !checked {
			checked, checkErr = true, c.canAdopt(ctx, rs)
		}
		if checkErr != nil {
			errs = append(errs, checkErr)
			break
		}
		adopted, err := c.adopt(ctx, rs, pod)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, err)
		default:
			out.pods = append(out.pods, adopted)
			out.adopted++
		}
	}
	return out, errors.Join(errs...)
}

// canAdopt re-reads rs from the API server: a ReplicaSet that is gone,
// recreated or being deleted must not adopt.
func (c *Controller) canAdopt(ctx context.Context, rs *appsv1.ReplicaSet) error {
	fresh, err := c.client.AppsV1().ReplicaSets(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("adopt: re-reading replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	if fresh.UID != rs.UID {
		return fmt.Errorf("adopt: replicaset %s/%s was recreated (uid %s, cached %s)", rs.Namespace, rs.Name, fresh.UID, rs.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("adopt: replicaset %s/%s is being deleted", rs.Namespace, rs.Name)
	}
	return nil
}

// ownerRefPatch is the metadata part of an adopt or release patch. The pod's
// uid makes the patch fail if the pod was replaced under the same name.
type ownerRefPatch struct {
	Metadata struct {
		OwnerReferences []map[string]any `json:"ownerReferences"`
		UID             types.UID        `json:"uid"`
	} `json:"metadata"`
}

func (c *Controller) adopt(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) (*corev1.Pod, error) {
	var p ownerRefPatch
	p.Metadata.UID = pod.UID
	p.Metadata.OwnerReferences = []map[string]any{{
		"apiVersion":         appsv1.SchemeGroupVersion.String(),
		"kind":               "ReplicaSet",
		"name":               rs.Name,
		"uid":                rs.UID,
		"controller":         true,
		"blockOwnerDeletion": true,
	}}
	return c.patchPod(ctx, pod, p)
}

func (c *Controller) release(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	var p ownerRefPatch
	p.Metadata.UID = pod.UID
	p.Metadata.OwnerReferences = []map[string]any{{"$patch": "delete", "uid": rs.UID}}
	_, err := c.patchPod(ctx, pod, p)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil // gone, or no longer ours: nothing to release
	}
	return err
}

func (c *Controller) patchPod(ctx context.Context, pod *corev1.Pod, p ownerRefPatch) (*corev1.Pod, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
}
