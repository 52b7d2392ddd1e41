package clientgo

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Owners is a [reconcile.OwnersByController] over an informer's indexer
// (Get, List, ListByController) and a live getter (GetLive). Indexer,
// Resource and Live are required; the zero value is not usable. It is safe
// for concurrent use; the returned objects are the cache's and must not be
// modified.
type Owners[T reconcile.Object] struct {
	// Indexer is the owner informer's store, e.g. informer.GetIndexer().
	// With a namespace index (every informer factory adds one) List reads
	// only the namespace; without, it filters every object. With
	// [ControllerUIDIndex] ([AddControllerUIDIndexer], [Register] adds it)
	// ListByController reads only the owners with that controller;
	// without, it lists the namespace and filters.
	Indexer cache.Indexer
	// Resource names the owners in NotFound errors, e.g.
	// appsv1.Resource("replicasets").
	Resource schema.GroupResource
	// Live reads the owner from the API server (R-9.5: the re-read before
	// adoption). It must return an apierrors NotFound error when absent.
	Live func(ctx context.Context, namespace, name string) (T, error)
}

var _ reconcile.OwnersByController[*appsv1.ReplicaSet] = Owners[*appsv1.ReplicaSet]{}

// Get returns the cached owner namespace/name, or an apierrors NotFound
// error. An object of another type under that key is an error.
func (o Owners[T]) Get(namespace, name string) (T, error) {
	var zero T
	obj, ok, err := o.Indexer.GetByKey(reconcile.OwnerKey(namespace, name))
	if err != nil {
		return zero, err
	}
	if !ok {
		return zero, apierrors.NewNotFound(o.Resource, name)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("clientgo: cache object %s is a %T, not a %T", reconcile.OwnerKey(namespace, name), obj, zero)
	}
	return t, nil
}

// List returns the cached owners of namespace, in no particular order.
// Objects of another type are skipped.
func (o Owners[T]) List(namespace string) ([]T, error) {
	var out []T
	err := cache.ListAllByNamespace(o.Indexer, namespace, labels.Everything(), func(obj any) {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	})
	return out, err
}

// ListByController returns the cached owners of namespace whose
// controller ownerRef has uid, in no particular order: one index lookup
// with [ControllerUIDIndex], else List filtered (a cost proportional to the
// namespace's owners). Objects of another type are skipped.
func (o Owners[T]) ListByController(namespace string, uid types.UID) ([]T, error) {
	if !hasIndex(o.Indexer, ControllerUIDIndex) {
		all, err := o.List(namespace)
		if err != nil {
			return nil, err
		}
		var out []T
		for _, t := range all {
			if podops.HasControllerUID(t, namespace, uid) {
				out = append(out, t)
			}
		}
		return out, nil
	}
	objs, err := o.Indexer.ByIndex(ControllerUIDIndex, string(uid))
	if err != nil {
		return nil, err
	}
	var out []T
	for _, obj := range objs {
		if t, ok := obj.(T); ok && podops.HasControllerUID(t, namespace, uid) {
			out = append(out, t)
		}
	}
	return out, nil
}

// GetLive reads the owner from the API server with Live.
func (o Owners[T]) GetLive(ctx context.Context, namespace, name string) (T, error) {
	if o.Live == nil {
		var zero T
		return zero, fmt.Errorf("clientgo: Owners.Live is nil")
	}
	return o.Live(ctx, namespace, name)
}

// ReplicaSetOwners is [Owners] for apps/v1 ReplicaSets: the informer's
// indexer and a live GET through client.
func ReplicaSetOwners(client kubernetes.Interface, informer cache.SharedIndexInformer) Owners[*appsv1.ReplicaSet] {
	return Owners[*appsv1.ReplicaSet]{
		Indexer:  informer.GetIndexer(),
		Resource: appsv1.Resource("replicasets"),
		Live: func(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
			return client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
	}
}

// Pods is a [reconcile.PodsByController] over a pod informer's indexer.
// With [PodControllerIndex] ([AddPodControllerIndexer]; [Register] adds
// it) a sync reads only the owner's pods and the namespace's orphans;
// without, ListByController lists the namespace (with a namespace index,
// which every informer factory adds, only the namespace) and filters. It
// is safe for concurrent use; the pods are the cache's and must not be
// modified. Add the index before the workers start: client-go's indexer
// does not guard its set of indexes against a concurrent addition.
type Pods struct {
	Indexer cache.Indexer
}

var _ reconcile.PodsByController = Pods{}

// List returns every cached pod of namespace, in any state.
func (p Pods) List(namespace string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	err := cache.ListAllByNamespace(p.Indexer, namespace, labels.Everything(), func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			out = append(out, pod)
		}
	})
	return out, err
}

// ListByController returns the cached pods of namespace whose controller
// ownerRef has kind, name and uid, then the namespace's orphans: two index
// lookups with [PodControllerIndex], else List filtered (a cost
// proportional to the namespace's pods).
func (p Pods) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	if !hasIndex(p.Indexer, PodControllerIndex) {
		all, err := p.List(namespace)
		if err != nil {
			return nil, err
		}
		var out []*corev1.Pod
		for _, pod := range all {
			if podops.ControlledByOrOrphan(pod, namespace, kind, name, uid) {
				out = append(out, pod)
			}
		}
		return out, nil
	}
	var out []*corev1.Pod
	for _, key := range podops.OwnedKeys(namespace, kind, name, uid) {
		objs, err := p.Indexer.ByIndex(PodControllerIndex, key)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if pod, ok := obj.(*corev1.Pod); ok {
				out = append(out, pod)
			}
		}
	}
	return out, nil
}
