package reconcile

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// statusMark is the last status write the Controller made for an owner:
// which object (UID), at which generation, when (the sync's status time).
type statusMark struct {
	uid        types.UID
	generation int64
	at         time.Time
}

// coalesce decides under Config.StatusInterval whether the status write the
// sync of key is about to make may wait: it returns how long until
// the owner's interval ends, and true when the write may wait. A write never
// waits when the interval is off, when it carries a manage error, when the
// owner has converged, when the Controller has not written this owner's
// status yet (or wrote an older generation, or another object under the
// key), or when the interval has passed (or the clock went back).
func (c *Controller[T]) coalesce(key string, obj T, res *SyncResult) (time.Duration, bool) {
	interval := c.cfg.StatusInterval
	if interval <= 0 || res.ManageErr != nil || converged(res) {
		return 0, false
	}
	c.mu.Lock()
	mark, ok := c.marks[key]
	c.mu.Unlock()
	if !ok || mark.uid != obj.GetUID() || mark.generation != obj.GetGeneration() {
		return 0, false
	}
	elapsed := res.Now.Sub(mark.at)
	if elapsed < 0 || elapsed >= interval {
		return 0, false
	}
	return interval - elapsed, true
}

// converged reports whether the sync's counts are the owner's final ones:
// every desired pod there, ready and available, none terminating.
func converged(res *SyncResult) bool {
	want := res.Owner.Replicas
	n := res.Counts
	return n.Replicas == want && n.Ready == want && n.Available == want && n.Terminating == 0
}

// markWritten remembers a status write for key, under Config.StatusInterval
// only (otherwise nothing reads it).
func (c *Controller[T]) markWritten(key string, obj T, at time.Time) {
	if c.cfg.StatusInterval <= 0 {
		return
	}
	c.mu.Lock()
	if c.marks == nil {
		c.marks = make(map[string]statusMark)
	}
	c.marks[key] = statusMark{uid: obj.GetUID(), generation: obj.GetGeneration(), at: at}
	c.mu.Unlock()
}
