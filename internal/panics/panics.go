// Package panics carries a panic from the goroutines a call started back to
// the goroutine that made the call: the one mechanism behind slowstart.Run
// and reconcile's creates and deletes.
//
// Why propagate at all? golang.org/x/sync/errgroup does not: a panic in one
// of its goroutines crashes the process, which is honest when nothing could
// recover it anyway. Our callers differ in two ways. controller-runtime
// recovers a reconciler's panic by default and goes on running, so a panic
// that escaped on a goroutine we started would crash a process its owner
// asked to survive; and the expectations must first be lowered for the
// calls that did not happen, or the owner would wait five minutes for
// events that cannot come. So the calls are joined, the books corrected,
// and the panic raised again where the caller can see it.
package panics

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Set records the panics of calls that run on goroutines of their own,
// numbered by an index, and keeps the one with the lowest index (the first
// call in the caller's order, whatever the scheduling). The zero value is
// ready to use; a Set is safe for concurrent use.
type Set struct {
	mu     sync.Mutex
	ok     bool
	index  int
	value  any
	stack  []byte
	goexit bool
}

// Call calls f and reports whether it returned normally. If f panics, the
// panic is recovered and recorded under index i, with the stack of the
// goroutine that panicked, and Call returns false. If f calls
// runtime.Goexit, that is recorded and the goroutine still ends.
func (s *Set) Call(i int, f func()) (returned bool) {
	defer func() {
		if returned {
			return
		}
		// Since Go 1.21 panic(nil) recovers as *runtime.PanicNilError, so
		// nil here means runtime.Goexit.
		v := recover()
		s.record(i, v)
	}()
	f()
	return true
}

func (s *Set) record(i int, v any) {
	var stack []byte
	if v != nil {
		stack = debug.Stack()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == nil {
		s.goexit = true
		return
	}
	if !s.ok || i < s.index {
		s.ok, s.index, s.value, s.stack = true, i, v, stack
	}
}

// Panicked reports whether a call panicked, and if so the lowest index that
// did, its value and the stack of the goroutine that panicked.
func (s *Set) Panicked() (index int, value any, stack []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index, s.value, s.stack, s.ok
}

// Repanic re-raises what was recorded, in the calling goroutine: the panic
// with the lowest index, with its original value (so that == , errors.Is
// and errors.As see what the call panicked with), or else a
// runtime.Goexit. It returns when nothing was recorded. The caller joins
// every call first.
func (s *Set) Repanic() {
	s.mu.Lock()
	ok, v, goexit := s.ok, s.value, s.goexit
	s.mu.Unlock()
	if ok {
		panic(v)
	}
	if goexit {
		runtime.Goexit()
	}
}
