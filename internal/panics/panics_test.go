package panics_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/internal/panics"
)

//go:noinline
func panicsHere(v any) { panic(v) }

func TestCallReturns(t *testing.T) {
	var s panics.Set
	ran := false
	assert.True(t, s.Call(0, func() { ran = true }))
	assert.True(t, ran)
	_, _, _, ok := s.Panicked()
	assert.False(t, ok)
	assert.NotPanics(t, s.Repanic, "nothing recorded: Repanic returns")
}

func TestCallRecordsValueAndStack(t *testing.T) {
	boom := errors.New("boom")
	var s panics.Set
	assert.False(t, s.Call(3, func() { panicsHere(boom) }))
	i, v, stack, ok := s.Panicked()
	require.True(t, ok)
	assert.Equal(t, 3, i)
	assert.Same(t, boom, v, "the value is kept as raised")
	assert.Contains(t, string(stack), "panics_test.panicsHere", "the stack is the panicking goroutine's")

	got := func() (r any) {
		defer func() { r = recover() }()
		s.Repanic()
		return nil
	}()
	assert.Same(t, boom, got)
	assert.ErrorIs(t, got.(error), boom)
}

func TestLowestIndexWins(t *testing.T) {
	var s panics.Set
	var wg sync.WaitGroup
	for i := 9; i >= 0; i-- {
		wg.Go(func() {
			if i%3 == 2 {
				s.Call(i, func() { panic(i) })
			} else {
				s.Call(i, func() {})
			}
		})
	}
	wg.Wait()
	i, v, _, ok := s.Panicked()
	require.True(t, ok)
	assert.Equal(t, 2, i)
	assert.Equal(t, 2, v)
}

func TestPanicNilIsAPanic(t *testing.T) {
	var s panics.Set
	assert.False(t, s.Call(0, func() { panic(nil) }))
	_, v, _, ok := s.Panicked()
	require.True(t, ok)
	assert.IsType(t, (*runtime.PanicNilError)(nil), v)
}

func TestGoexitIsReplayed(t *testing.T) {
	var s panics.Set
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Call(0, runtime.Goexit)
		t.Error("Goexit returned to Call's caller")
	}()
	<-done
	_, _, _, ok := s.Panicked()
	assert.False(t, ok, "Goexit is not a panic")

	exited := make(chan bool)
	go func() {
		normal := false
		defer func() { exited <- !normal }()
		s.Repanic()
		normal = true
	}()
	assert.True(t, <-exited, "Repanic replays the Goexit")
}
