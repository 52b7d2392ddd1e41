package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// controllerIndex indexes the pods of an Unstamped by their controller's UID.
const controllerIndex = "sharding.reconcilekit.io/controller-uid"

// Unstamped is what a sharded controller knows of its pods that carry no
// valid [BucketLabel]: those created before sharding was turned on (and any
// a user stripped of the label or set to a value that is no bucket), which
// no shard's pod cache selects. Read from an informer of those pods
// ([UnstampedSelector]; clientgo: OwnedPods.Unsharded().Factory), shared by
// all the shards a replica holds, it is used twice per shard:
//
//   - [WrapCluster] adds the shard's unstamped pods, by their controller,
//     to the pods its Controller lists, so that they count from the first
//     sync and are never replaced (and its CachesSynced waits for the
//     informer's first list);
//   - [Unstamped.Stamp] puts the label on them, fenced by the shard, one
//     patch per pod, so that they move to the shard's pod cache. A pod
//     patched but not yet in that cache stays listed, until the cache has
//     passed the patch's resourceVersion.
//
// Pods without a controller reference are not listed: with sharding, an
// orphan without the label is never adopted, as an orphan without the
// owned-pods stamp is not (docs/rules.md). An Unstamped is safe for
// concurrent use; the nil *Unstamped knows no pod (a controller sharded
// from its first pod).
type Unstamped struct {
	informer cache.SharedIndexInformer
}

// NewUnstamped returns the Unstamped of informer, a pod informer that has
// not started (it adds an index by controller UID).
func NewUnstamped(informer cache.SharedIndexInformer) (*Unstamped, error) {
	if informer == nil {
		return nil, errors.New("sharding: NewUnstamped: nil informer")
	}
	err := informer.AddIndexers(cache.Indexers{controllerIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			return nil, nil
		}
		return []string{string(ref.UID)}, nil
	}})
	if err != nil {
		return nil, fmt.Errorf("sharding: NewUnstamped: %w", err)
	}
	return &Unstamped{informer: informer}, nil
}

// synced reports whether u's informer has listed (true for a nil u).
func (u *Unstamped) synced() bool {
	return u == nil || u.informer.HasSynced()
}

// of returns the unstamped pods controlled by uid in namespace.
func (u *Unstamped) of(namespace string, uid types.UID) []*corev1.Pod {
	if u == nil {
		return nil
	}
	objs, err := u.informer.GetIndexer().ByIndex(controllerIndex, string(uid))
	if err != nil {
		return nil
	}
	var out []*corev1.Pod
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && (namespace == "" || p.Namespace == namespace) && p.Labels[BucketLabel] != BucketValue(uid) {
			out = append(out, p)
		}
	}
	return out
}

// inShard returns the unstamped pods of s's owners in namespace ("" for all).
func (u *Unstamped) inShard(s Shard, namespace string) []*corev1.Pod {
	if u == nil {
		return nil
	}
	var out []*corev1.Pod
	for _, o := range u.informer.GetStore().List() {
		p, ok := o.(*corev1.Pod)
		if !ok || (namespace != "" && p.Namespace != namespace) {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref != nil && s.Contains(ref.UID) && p.Labels[BucketLabel] != BucketValue(ref.UID) {
			out = append(out, p)
		}
	}
	return out
}

// Stamp puts [BucketLabel] on the unstamped pods of h's shard, with client
// (the shard's fenced pod client), one strategic-merge patch per pod with
// the pod's UID as precondition, asking h.Fence before each; it records
// each patched pod in h until the shard's pod cache shows it. It returns
// how many pods it stamped and the first refusal or failure (a pod gone
// meanwhile is not one). A nil u stamps nothing. Call it from the shard's
// RunFunc, at its start and then periodically while it runs.
func (u *Unstamped) Stamp(ctx context.Context, h *Held, client reconcile.PodClient) (int, error) {
	stamped := 0
	for _, pod := range u.inShard(h.shard, "") {
		if err := h.Fence(); err != nil {
			return stamped, err
		}
		ref := metav1.GetControllerOf(pod)
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"uid":    pod.UID,
			"labels": map[string]string{BucketLabel: BucketValue(ref.UID)},
		}})
		if err != nil {
			return stamped, fmt.Errorf("sharding: stamping pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		patched, err := client.PatchPod(ctx, pod, patch)
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err):
			continue // gone, or another pod under that name: the informer will tell
		case err != nil:
			return stamped, fmt.Errorf("sharding: stamping pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		h.restamped(patched)
		stamped++
	}
	return stamped, nil
}
