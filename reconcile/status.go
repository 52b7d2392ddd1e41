package reconcile

import (
	"context"
	"errors"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/reconcilekit/reconcilekit/status"
)

// StatusFunc computes an owner's status from what a sync saw and did: the
// pure half of the status step, which Config.Status holds. It returns a
// copy of owner carrying the new status and true, or false when owner's
// status is already right and nothing is to be written (upstream's skip,
// next is then ignored). It must not modify owner (the cache's object),
// must not call the API server and must be safe for concurrent use: the
// [Controller] writes what it returns with Config.Cluster.StatusWriter and records
// the version the server answered itself.
type StatusFunc[T Object] func(owner T, res SyncResult) (next T, write bool)

// StatusWriter writes an owner's status to the API server: the write half
// of the status step, which the adapters implement (client-go's
// UpdateStatus with upstream's one retry, controller-runtime's
// Status().Update). Implementations must be safe for concurrent use.
type StatusWriter[T Object] interface {
	// WriteStatus writes next's status (next is the [StatusFunc]'s copy;
	// the writer may change it) and returns the owner as the API server
	// answered, whose resourceVersion the Controller records for the
	// consistency gate. On error the status counts as not
	// written.
	WriteStatus(ctx context.Context, next T) (T, error)
}

// ReplicaSetStatus returns the [StatusFunc] of upstream's ReplicaSet
// controller, which [ReplicaSets] sets: the status is [status.Calculate]d
// from res.Active, res.Terminating, res.ManageErr and res.Now with opts;
// nothing is written when the ReplicaSet already has it
// ([status.NeedsUpdate], R-8.6); otherwise the copy carries it with
// observedGeneration set to the generation acted on ([status.ForWrite],
// It never modifies rs.
func ReplicaSetStatus(opts status.Options) StatusFunc[*appsv1.ReplicaSet] {
	return func(rs *appsv1.ReplicaSet, res SyncResult) (*appsv1.ReplicaSet, bool) {
		newStatus := status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, opts)
		if !status.NeedsUpdate(rs, newStatus) {
			return nil, false
		}
		next := rs.DeepCopy()
		next.Status = status.ForWrite(rs, newStatus)
		return next, true
	}
}

// writeStatus runs the status step of a sync: Config.Status computes, and
// when it asks for a write, Config.Fence is asked and
// Config.Cluster.StatusWriter writes. The version the
// server answered (or the cached owner's, after a skip, as upstream) is
// recorded under Config.Cluster.Resource for the consistency gate.
func (c *Controller[T]) writeStatus(ctx context.Context, key string, obj T, res *SyncResult) error {
	next, write := c.cfg.Status(obj, *res)
	recorded := obj // a skip records the cached version, harmlessly
	if write {
		switch {
		case isNilValue(next):
			return errors.New("the Config.Status func asked for a write and returned no object")
		case sameObject(next, obj):
			return errors.New("the Config.Status func returned the cached owner itself: return a copy (owner.DeepCopy()) carrying the new status")
		}
		if wait, ok := c.coalesce(key, obj, res); ok {
			res.StatusCoalesced = true
			res.RequeueAfter = wait
			write = false
		}
	}
	if write {
		if err := checkFence(c.cfg.Fence, key, "writing status"); err != nil {
			return err // asked only when there is a write to make
		}
		written, err := c.cfg.Cluster.StatusWriter.WriteStatus(ctx, next)
		if err != nil {
			return err
		}
		if isNilValue(written) {
			return errors.New("the Config.Cluster.StatusWriter returned no object and no error")
		}
		res.StatusWritten = true
		res.Written = written
		recorded = written
		c.markWritten(key, obj, res.Now)
	}
	if c.cfg.Cluster.Resource.Resource != "" {
		if rv := recorded.GetResourceVersion(); rv != "" {
			c.gate.Wrote(key, obj.GetUID(), c.cfg.Cluster.Resource, rv)
		}
	}
	return nil
}

// sameObject reports whether a and b are the same pointer.
func sameObject[T Object](a, b T) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Pointer || vb.Kind() != reflect.Pointer {
		return false
	}
	return va.Pointer() == vb.Pointer()
}

// statusError wraps a failed status step.
func statusError(key string, err error) error {
	return ownerErrorf(key, "writing status: %w", err)
}
