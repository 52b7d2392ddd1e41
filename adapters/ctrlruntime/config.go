package ctrlruntime

import (
	"fmt"
	"reflect"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// NewConfig returns a [reconcile.Config] for owners of type T with the
// client-side fields filled from mgr: Kind (from mgr's scheme), Owners
// ([NewOwners] over mgr.GetClient() and mgr.GetAPIReader()), Pods
// (mgr.GetClient()) and Control and Patcher ([PodControl] with recorder,
// which may be nil). The caller sets Describe and WriteStatus (and any
// tuning) before [reconcile.NewController].
func NewConfig[T reconcile.Object](mgr ctrl.Manager, recorder events.EventRecorder) (reconcile.Config[T], error) {
	if mgr == nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: nil manager")
	}
	owners, err := NewOwners[T](mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme())
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	obj, err := newOf[T]()
	if err != nil {
		return reconcile.Config[T]{}, err
	}
	gvks, _, err := mgr.GetScheme().ObjectKinds(obj)
	if err != nil {
		return reconcile.Config[T]{}, fmt.Errorf("ctrlruntime: NewConfig: %w", err)
	}
	pc := PodControl{Client: mgr.GetClient(), Recorder: recorder}
	return reconcile.Config[T]{
		Kind:    gvks[0],
		Owners:  owners,
		Pods:    Pods{Reader: mgr.GetClient()},
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
