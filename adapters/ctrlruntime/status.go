package ctrlruntime

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// StatusWriter is the [reconcile.StatusWriter] of a controller-runtime
// controller: Status().Update on the status subresource, which fills next
// in from the server's answer; that answer is returned, for the Controller
// to record its version. There is no retry: a conflict is
// returned, and the reconcile is retried with rate limiting, as
// controller-runtime does. [NewConfig] sets it. Client is required; the
// zero value returns an error. It is safe for concurrent use.
type StatusWriter[T reconcile.Object] struct {
	Client client.Client
}

// WriteStatus writes next's status and returns next as the server
// answered.
func (w StatusWriter[T]) WriteStatus(ctx context.Context, next T) (T, error) {
	var zero T
	if w.Client == nil {
		return zero, errors.New("ctrlruntime: StatusWriter: nil Client")
	}
	obj, ok := any(next).(client.Object)
	if !ok || obj == nil {
		return zero, errors.New("ctrlruntime: StatusWriter: the owner is not a client.Object")
	}
	if err := w.Client.Status().Update(ctx, obj); err != nil {
		return zero, err
	}
	return next, nil
}
