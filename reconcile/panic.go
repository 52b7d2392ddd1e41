package reconcile

// callPanic remembers a panic raised by a PodControl call so that it can be
// re-raised in the caller's goroutine.
type callPanic struct {
	value any
	ok    bool
}
