// Package fakeclock provides a manually advanced clock for tests. It
// satisfies the library's one clock interface, expectations.Clock (which
// reconcile.Clock names too).
//
// It does not model timers or tickers: only Now.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a clock that moves only when told to. The zero Clock reads the
// zero time. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock reading t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's current reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Step advances the clock by d (which may be negative).
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
