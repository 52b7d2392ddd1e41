package ctrlruntime

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// NewConfig returns a [reconcile.Config] for owners of type T with the
// client-side fields filled: Kind (from scheme), Owners ([NewOwners] over c
// and live), Pods (over c) and Control and Patcher ([PodControl] over c,
// with recorder, which may be nil). In a manager pass mgr.GetClient(),
// mgr.GetAPIReader() and mgr.GetScheme(). The caller sets Describe and
// WriteStatus (and any tuning) before [reconcile.NewController].
func NewConfig[T reconcile.Object](c client.Client, live client.Reader, scheme *runtime.Scheme, recorder events.EventRecorder) (reconcile.Config[T], error) {
	owners, err := NewOwners[T](c, live, scheme)
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	obj, err := newOf[T]()
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: %w", err)
	}
	pc := PodControl{Client: c, Recorder: recorder}
	return reconcile.Config[T]{
		Kind:    gvks[0],
		Owners:  owners,
		Pods:    Pods{Reader: c},
		Control: pc,
		Patcher: pc,
	}, nil
}

// newOf returns a new empty T (a pointer type).
func newOf[T reconcile.Object]() (T, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		var zero T
		return zero, fmt.Errorf("ctrlruntime: %v is not a pointer type", typ)
	}
	return reflect.New(typ.Elem()).Interface().(T), nil
}
