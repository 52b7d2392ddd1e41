package sharding

import (
	"time"

	"k8s.io/utils/clock"
)

// NewHeldForTest returns the Held of shard s as the Coordinator makes it
// when it takes s from a Lease whose WrittenAnnotation is resume: its fence
// open from clk.Now() for window (RenewDeadline), never renewed.
func NewHeldForTest(s Shard, resume string, clk clock.PassiveClock, window time.Duration) *Held {
	return newHeld(s, "test-lease-"+s.String(), resume, clk, window, clk.Now())
}

// WrittenForTest returns what the Coordinator writes into the shard's
// WrittenAnnotation when it renews or gives back h: the newest version
// Held.Wrote recorded, or Resume.
func (h *Held) WrittenForTest() string { return h.written() }
