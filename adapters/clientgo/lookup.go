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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Owners is a [reconcile.Owners] over an informer's indexer (Get and List)
// and a live getter (GetLive). Indexer, Resource and Live are required; the
// zero value is not usable. It is safe for concurrent use; the returned
// objects are the cache's and must not be modified.
type Owners[T reconcile.Object] struct {
	// Indexer is the owner informer's store, e.g. informer.GetIndexer().
	// With a namespace index (every informer factory adds one) List reads
	// only the namespace; without, it filters every object.
	Indexer cache.Indexer
	// Resource names the owners in NotFound errors, e.g.
	// appsv1.Resource("replicasets").
	Resource schema.GroupResource
	// Live reads the owner from the API server (R-9.5: the re-read before
	// adoption). It must return an apierrors NotFound error when absent.
	Live func(ctx context.Context, namespace, name string) (T, error)
}

var _ reconcile.Owners[*appsv1.ReplicaSet] = Owners[*appsv1.ReplicaSet]{}

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

// Pods is a [reconcile.Pods] over a pod informer's indexer (with a
// namespace index it reads only the namespace). It is safe for concurrent
// use; the pods are the cache's and must not be modified.
type Pods struct {
	Indexer cache.Indexer
}

var _ reconcile.Pods = Pods{}

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
