package ctrlruntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Owners is a [reconcile.OwnersByController] over controller-runtime
// readers: Get, List and ListByController read Cache (in a manager:
// mgr.GetClient(), which reads the informer cache), GetLive reads Live
// (mgr.GetAPIReader()). Create it with [NewOwners]; the zero value is not
// usable. It is safe for concurrent use. The lists are not deep-copied
// (client.UnsafeDisableDeepCopy: the objects share memory with the cache
// and must not be modified, which reconcile never does); Get returns a
// copy, since Config.Status receives it.
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
	if err := o.cache.List(context.Background(), list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return o.items(list)
}

// ListByController returns the cached owners of namespace whose
// controller ownerRef has uid: one index lookup when the cache has
// [ControllerUIDField] ([AddIndexes]), else List filtered (a cost
// proportional to the namespace's owners).
func (o Owners[T]) ListByController(namespace string, uid types.UID) ([]T, error) {
	list, err := o.newList()
	if err != nil {
		return nil, err
	}
	err = o.cache.List(context.Background(), list, client.InNamespace(namespace),
		client.MatchingFields{ControllerUIDField: string(uid)}, client.UnsafeDisableDeepCopy)
	var all []T
	switch {
	case missingIndex(err, ControllerUIDField):
		if all, err = o.List(namespace); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		if all, err = o.items(list); err != nil {
			return nil, err
		}
	}
	var out []T
	for _, t := range all {
		if podops.HasControllerUID(t, namespace, uid) {
			out = append(out, t)
		}
	}
	return out, nil
}

// items returns list's items that are T.
func (o Owners[T]) items(list client.ObjectList) ([]T, error) {
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

// Pods is a [reconcile.PodsByController] over a controller-runtime reader
// (in a manager: mgr.GetClient(), the cache). Reader is required. It is
// safe for concurrent use. The pods are not deep-copied
// (client.UnsafeDisableDeepCopy): they share memory with the cache and must
// not be modified, which reconcile never does. The Pods that [NewConfig]
// builds also reads the manager's pod index directly, without the copy of
// every pod listed that the reader makes; the answers are the same.
type Pods struct {
	Reader client.Reader

	index *podIndex // set by NewConfig; nil: through Reader only
}

var _ reconcile.PodsByController = Pods{}

// List returns every pod of namespace, in any state.
func (p Pods) List(namespace string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := p.Reader.List(context.Background(), &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return pointers(list.Items), nil
}

// ListByController returns the cached pods of namespace whose controller
// ownerRef has kind, name and uid, then the namespace's orphans: two index
// lookups when the reader has [PodControllerField] ([AddIndexes];
// [Register] adds it), else List filtered (a cost proportional to the
// namespace's pods).
func (p Pods) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	keys := podops.OwnedKeys(namespace, kind, name, uid)
	if pods, ok := p.index.byKeys(namespace, keys[:]); ok {
		return pods, nil
	}
	var out []*corev1.Pod
	for _, key := range keys {
		var list corev1.PodList
		err := p.Reader.List(context.Background(), &list, client.InNamespace(namespace),
			client.MatchingFields{PodControllerField: key}, client.UnsafeDisableDeepCopy)
		if missingIndex(err, PodControllerField) {
			return p.listFiltered(namespace, kind, name, uid)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, pointers(list.Items)...)
	}
	return out, nil
}

// listFiltered is ListByController without an index.
func (p Pods) listFiltered(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
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

// pointers returns a pointer to each element of items.
func pointers(items []corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
