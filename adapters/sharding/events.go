package sharding

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// FenceOwner returns nil while this replica may write for the owner whose
// UID is uid: it holds the owner's shard and that shard's [Held.Fence] is
// open. Otherwise it returns an error wrapping [ErrNotHeld]. It is the
// fence of what a replica writes once for all its shards, such as events
// ([Coordinator.EventSink]). Safe for concurrent use.
func (c *Coordinator) FenceOwner(uid types.UID) error {
	s, err := Of(uid, c.opts.Shards)
	if err != nil {
		return err
	}
	c.mu.Lock()
	hd := c.held[s.Index]
	c.mu.Unlock()
	if hd == nil {
		return fmt.Errorf("%w: shard %v, the owner %s's, is not held by this replica", ErrNotHeld, s, uid)
	}
	return hd.h.Fence()
}

// EventSink returns inner fenced by the shard of each event's involved
// object ([Coordinator.FenceOwner]): an event about an owner this replica
// does not hold, or holds behind a closed fence, is not sent. It is
// refused with a *StatusError (reason Conflict, its message the fence's
// reason), which a record.EventBroadcaster drops at once, logging it, as
// it drops an event the API server refuses; any other error would have
// the broadcaster retry the event for minutes, holding up the events
// behind it. With it one broadcaster serves every
// shard a replica holds: one queue, one correlator and one goroutine per
// replica, instead of one per shard. Record events only about owners
// through it. inner is required; the sink is safe for concurrent use when
// inner is.
func (c *Coordinator) EventSink(inner record.EventSink) record.EventSink {
	return fencedEvents{inner: inner, fence: c.FenceOwner}
}

type fencedEvents struct {
	inner record.EventSink
	fence func(types.UID) error
}

func (s fencedEvents) Create(e *corev1.Event) (*corev1.Event, error) {
	if err := s.check(e); err != nil {
		return nil, err
	}
	return s.inner.Create(e)
}

func (s fencedEvents) Update(e *corev1.Event) (*corev1.Event, error) {
	if err := s.check(e); err != nil {
		return nil, err
	}
	return s.inner.Update(e)
}

func (s fencedEvents) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	if err := s.check(old); err != nil {
		return nil, err
	}
	return s.inner.Patch(old, data)
}

// check asks the fence of e's involved object; a refusal is a StatusError,
// the only kind a broadcaster does not retry.
func (s fencedEvents) check(e *corev1.Event) error {
	err := s.fence(e.InvolvedObject.UID)
	if err == nil {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Message: "event not sent: " + err.Error(),
	}}
}
