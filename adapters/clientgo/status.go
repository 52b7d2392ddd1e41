package clientgo

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// OwnerClient is the part of an owner kind's typed client, in one
// namespace, that a controller calls: the live read before adoption
// and the status write. client-go's typed clients have both, e.g.
// client.AppsV1().ReplicaSets(namespace), and so has a generated
// clientset's client for a custom resource, e.g.
// clientset.ExampleV1().WebApps(namespace). Implementations must be safe
// for concurrent use and return apierrors NotFound for a missing owner.
type OwnerClient[T reconcile.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, owner T, opts metav1.UpdateOptions) (T, error)
}

// StatusWriter is the [reconcile.StatusWriter] of a client-go controller
// for any owner kind: UpdateStatus with upstream's one retry on a freshly
// read object, at most two UpdateStatus calls and one GET, the GET's error
// returned if it fails. The retry carries the status the
// Controller asked for, observedGeneration included, onto the fresh
// object: T must be a pointer to a struct with a Status field, as every
// Kubernetes API type and generated custom resource is; WriteStatus
// refuses another T with an error before any call. Config.Status decides
// whether anything is written at all. [NewConfig] sets it.
//
// Client is required: it returns the owners' typed client in a namespace,
// e.g. func(ns string) clientgo.OwnerClient[*v1.WebApp] { return
// clientset.ExampleV1().WebApps(ns) }. The zero value returns an error. A
// StatusWriter keeps no state and is safe for concurrent use when Client
// is. It never modifies the owner passed in.
type StatusWriter[T reconcile.Object] struct {
	Client func(namespace string) OwnerClient[T]
}

var _ reconcile.StatusWriter[*appsv1.ReplicaSet] = StatusWriter[*appsv1.ReplicaSet]{}

// WriteStatus writes next's status and returns the server's object.
func (w StatusWriter[T]) WriteStatus(ctx context.Context, next T) (T, error) {
	var zero T
	if w.Client == nil {
		return zero, errors.New("clientgo: StatusWriter: nil Client")
	}
	if isNilObject(next) {
		return zero, errors.New("clientgo: StatusWriter: nil owner")
	}
	if !hasStatusField[T]() {
		return zero, fmt.Errorf("clientgo: StatusWriter: %T has no Status field to carry onto a fresh object on retry", next)
	}
	c := w.Client(next.GetNamespace())
	if c == nil {
		return zero, fmt.Errorf("clientgo: StatusWriter: Client returned no client for namespace %q", next.GetNamespace())
	}
	updated, err := c.UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if err == nil {
		return updated, nil
	}
	fresh, err := c.Get(ctx, next.GetName(), metav1.GetOptions{})
	if err != nil {
		return zero, err
	}
	if isNilObject(fresh) {
		return zero, fmt.Errorf("clientgo: StatusWriter: Get %s/%s returned no object", next.GetNamespace(), next.GetName())
	}
	copyStatus(fresh, next)
	updated, err = c.UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
	if err != nil {
		return zero, err // the typed client answers an empty object with an error
	}
	return updated, nil
}

// hasStatusField reports whether T is a pointer to a struct with a
// settable Status field.
func hasStatusField[T reconcile.Object]() bool {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := typ.Elem().FieldByName("Status")
	return ok && f.IsExported()
}

// copyStatus sets dst's Status to a deep copy of src's, as upstream's
// retry assigns the new status to the object it read; src is not
// modified. T has a Status field (hasStatusField).
func copyStatus[T reconcile.Object](dst, src T) {
	status := reflect.ValueOf(src.DeepCopyObject()).Elem().FieldByName("Status")
	reflect.ValueOf(dst).Elem().FieldByName("Status").Set(status)
}

// isNilObject reports whether obj is nil or a nil pointer.
func isNilObject[T reconcile.Object](obj T) bool {
	v := reflect.ValueOf(obj)
	return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil())
}

// ReplicaSetStatusWriter is the [StatusWriter] of a ReplicaSet controller
// over a [kubernetes.Interface]: the same write and retry, with
// Config.Status ([reconcile.ReplicaSetStatus], which
// reconcile.ReplicaSets sets) deciding whether anything is written at all
// . Client is required; the zero value returns an error. It is
// safe for concurrent use.
type ReplicaSetStatusWriter struct {
	Client kubernetes.Interface
}

var _ reconcile.StatusWriter[*appsv1.ReplicaSet] = ReplicaSetStatusWriter{}

// WriteStatus writes next's status and returns the server's object.
func (w ReplicaSetStatusWriter) WriteStatus(ctx context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	if w.Client == nil {
		return nil, errors.New("clientgo: ReplicaSetStatusWriter: nil Client")
	}
	if next == nil {
		return nil, errors.New("clientgo: ReplicaSetStatusWriter: nil ReplicaSet")
	}
	return StatusWriter[*appsv1.ReplicaSet]{Client: replicaSetClient(w.Client)}.WriteStatus(ctx, next)
}

// replicaSetClient returns the ReplicaSets' typed client of a namespace.
func replicaSetClient(client kubernetes.Interface) func(namespace string) OwnerClient[*appsv1.ReplicaSet] {
	return func(namespace string) OwnerClient[*appsv1.ReplicaSet] {
		return client.AppsV1().ReplicaSets(namespace)
	}
}
