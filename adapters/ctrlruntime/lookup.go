package ctrlruntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Owners is a [reconcile.Owners] over controller-runtime readers: Get and
// List read Cache (in a manager: mgr.GetClient(), which reads the informer
// cache), GetLive reads Live (mgr.GetAPIReader()). Create it with
// [NewOwners]; the zero value is not usable. It is safe for concurrent use.
type Owners[T reconcile.Object] struct {
	cache, live client.Reader
	newObj      func() T
	newList     func() (client.ObjectList, error)
}

// NewOwners returns the owner lookups for T (a pointer to a type registered
// in scheme together with its list type, e.g. *v1alpha1.PodSet and
// PodSetList).
func NewOwners[T reconcile.Object](cache, live client.Reader, scheme *runtime.Scheme) (Owners[T], error) {
	obj, err := newOf[T]()
	if err != nil {
		return Owners[T]{}, err
	}
	if cache == nil || live == nil || scheme == nil {
		return Owners[T]{}, fmt.Errorf("ctrlruntime: NewOwners needs two readers and a scheme")
	}
	newObj := func() T { o, _ := newOf[T](); return o }
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return Owners[T]{}, fmt.Errorf("ctrlruntime: NewOwners: %w", err)
	}
	listKind := gvks[0]
	listKind.Kind += "List"
	newList := func() (client.ObjectList, error) {
		obj, err := scheme.New(listKind)
		if err != nil {
			return nil, err
		}
		list, ok := obj.(client.ObjectList)
		if !ok {
			return nil, fmt.Errorf("ctrlruntime: %v is not a list", listKind)
		}
		return list, nil
	}
	if _, err := newList(); err != nil {
		return Owners[T]{}, fmt.Errorf("ctrlruntime: NewOwners: %w", err)
	}
	return Owners[T]{cache: cache, live: live, newObj: newObj, newList: newList}, nil
}

// Get reads the owner from the cache; NotFound as the client reports it.
func (o Owners[T]) Get(namespace, name string) (T, error) {
	return o.get(context.Background(), o.cache, namespace, name)
}

// GetLive reads the owner from the API server.
func (o Owners[T]) GetLive(ctx context.Context, namespace, name string) (T, error) {
	return o.get(ctx, o.live, namespace, name)
}

func (o Owners[T]) get(ctx context.Context, r client.Reader, namespace, name string) (T, error) {
	obj := o.newObj()
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		var zero T
		return zero, err
	}
	return obj, nil
}

// List returns the cached owners of namespace.
func (o Owners[T]) List(namespace string) ([]T, error) {
	list, err := o.newList()
	if err != nil {
		return nil, err
	}
	if err := o.cache.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		if t, ok := it.(T); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// Pods is a [reconcile.Pods] over a controller-runtime reader (in a
// manager: mgr.GetClient(), the cache). Reader is required. It is safe for
// concurrent use.
type Pods struct {
	Reader client.Reader
}

var _ reconcile.Pods = Pods{}

// List returns every pod of namespace, in any state.
func (p Pods) List(namespace string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := p.Reader.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
