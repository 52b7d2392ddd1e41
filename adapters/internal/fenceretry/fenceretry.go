// Package fenceretry holds the adapters' one policy for a sync that the
// fence refused (reconcile.ErrFenced): retry it after a fixed delay, past
// the workqueue's rate limiter.
//
// A closed fence is the replica's state, not the owner's fault: the fence
// of a Lease whose renewal ran late closes for a while and opens again at
// the next renewal. Retried with the rate limiter, every owner that synced
// while it was closed would back off exponentially, and through the
// queue's shared token bucket (10 per second) delay every other owner
// too, for minutes after the fence opened again. A fenced sync reads only
// caches and makes no request, so a retry a second is cheap.
package fenceretry

import (
	"errors"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// After is the delay before a fenced sync is retried.
const After = time.Second

// Is reports whether err is a sync's refusal by its fence.
func Is(err error) bool { return errors.Is(err, reconcile.ErrFenced) }
