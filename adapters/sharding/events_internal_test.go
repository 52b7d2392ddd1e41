package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

// uidIn returns the first of the UIDs owner-0, owner-1, … in shard s.
func uidIn(t *testing.T, s Shard) types.UID {
	t.Helper()
	for i := range 10_000 {
		if uid := types.UID(fmt.Sprintf("owner-%d", i)); s.Contains(uid) {
			return uid
		}
	}
	t.Fatalf("no UID in %v", s)
	return ""
}

// recordingSink is the API server's events: what reached it.
type recordingSink struct {
	mu   sync.Mutex
	sent []types.UID
}

func (s *recordingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, e.InvolvedObject.UID)
	return e, nil
}
func (s *recordingSink) Update(e *corev1.Event) (*corev1.Event, error) { return s.Create(e) }
func (s *recordingSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return s.Create(e)
}

func (s *recordingSink) got() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]types.UID(nil), s.sent...)
}

// One broadcaster for all the shards a replica holds: an event about an
// owner of a held shard with an open fence is sent; one about an owner of
// a shard not held, or held behind a closed fence, is refused with a
// StatusError, which the broadcaster drops at once instead of retrying it
// (a retry would hold up every later event of the replica).
func TestEventSinkFencesByTheOwnersShard(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	opts, err := Options{Namespace: "ns", Name: "g", Identity: "a", Shards: 4, Clock: clk}.withDefaults()
	require.NoError(t, err)
	c := newCoordinator(nil, opts)
	held, closed, other := Shard{Index: 0, Count: 4}, Shard{Index: 1, Count: 4}, Shard{Index: 2, Count: 4}
	c.held[held.Index] = &holding{h: newHeld(held, "g-shard-0-of-4", "", clk, opts.RenewDeadline, clk.Now())}
	c.held[closed.Index] = &holding{h: newHeld(closed, "g-shard-1-of-4", "", clk, opts.RenewDeadline, clk.Now())}
	c.held[closed.Index].h.close("given back")
	inHeld, inClosed, inOther := uidIn(t, held), uidIn(t, closed), uidIn(t, other)

	assert.NoError(t, c.FenceOwner(inHeld))
	assert.ErrorIs(t, c.FenceOwner(inClosed), ErrNotHeld)
	assert.ErrorIs(t, c.FenceOwner(inOther), ErrNotHeld)

	inner := &recordingSink{}
	sink := c.EventSink(inner)
	_, err = sink.Create(&corev1.Event{InvolvedObject: corev1.ObjectReference{UID: inOther}})
	var status *apierrors.StatusError
	require.True(t, errors.As(err, &status), "a StatusError, which a broadcaster does not retry: %v", err)
	assert.True(t, apierrors.IsConflict(err))
	assert.Contains(t, err.Error(), "is not held by this replica")
	assert.Empty(t, inner.got(), "nothing sent")

	broadcaster := record.NewBroadcaster(record.WithContext(context.Background()))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(sink)
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "test"})
	for _, uid := range []types.UID{inOther, inClosed, inHeld} {
		recorder.Event(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: string(uid), Namespace: "ns", UID: uid}}, corev1.EventTypeNormal, "Test", "about "+string(uid))
	}
	// The broadcaster sleeps 10 s before retrying an event it may retry:
	// the held owner's event, after the two refused, arrives well before.
	require.Eventually(t, func() bool { return len(inner.got()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []types.UID{inHeld}, inner.got(), "only the event about the held, open shard's owner was sent")
}
