package ctrlruntime

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// NewConfigFrom is NewConfig over its parts, for tests that have a fake
// client rather than a manager.
func NewConfigFrom[T reconcile.Object](c client.Client, live client.Reader, informers cache.Informers, scheme *runtime.Scheme,
	recorder record.EventRecorder, opts ConfigOptions) (reconcile.Config[T], error) {
	return newConfig[T](c, live, informers, scheme, recorder, opts)
}
