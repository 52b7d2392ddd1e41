package slowstart

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reconcilekit/reconcilekit/internal/panics"
)

// Run calls fn count times, each with a distinct index i in [0, count), in
// batches whose sizes double (docs/rules.md §4): [Plan](count, opts) gives the sizes,
// and batch k receives the consecutive indices following batch k-1's, so the
// first batch gets [0, size₁). It returns the number of calls that returned a
// nil error and, if the run stopped early, why.
//
//   - The calls of one batch run concurrently, each on its own goroutine, and
//     Run waits for all of them before it starts the next batch.
//   - After a batch in which any call failed, no further batch starts and Run
//     returns a [*BatchError] wrapping every failure of that batch in
//     ascending index order (R-4.3; upstream returns only one of them).
//     succeeded includes the successful calls of that batch.
//   - Before each batch, if ctx is done, Run returns the calls that succeeded
//     so far and an error wrapping ctx.Err() (and [context.Cause] when that
//     differs). A batch that started always runs to completion; its calls
//     receive ctx and are expected to honour it.
//   - A panic in fn is re-raised by Run, on the caller's goroutine, with the
//     original panic value, after every call of that batch has returned; when
//     several calls panicked, the value of the lowest index wins. Likewise a
//     call that exits its goroutine with [runtime.Goexit] (for example
//     testing.T.FailNow) makes Run call runtime.Goexit after the batch
//     joined. No further batch starts in either case. The value is kept
//     unchanged (==, [errors.Is] and [errors.As] see it as fn raised it), so
//     the stack a crash prints is Run's caller's; fn records its own stack
//     if it wants it (a deferred recover calling runtime/debug.Stack), as
//     package reconcile does for its Hooks.Panicked. Why Run propagates
//     panics at all, where errgroup does not: docs/design/slowstart.md.
//   - No goroutine outlives Run: every goroutine it starts has finished its
//     call and signalled completion before Run returns or re-panics, and Run
//     starts no other goroutines.
//   - count <= 0 makes no call and returns (0, nil), whatever ctx and
//     fn are. A nil fn with count > 0 returns an error and makes no call; a
//     nil ctx means [context.Background].
//
// Each call costs one goroutine and one small allocation (the go
// statement's record of its argument), as upstream's closure per call does;
// each batch allocates its shared state and a slot per call for the errors
// (see BenchmarkRun). Set [Options.MaxBatchSize] to bound the goroutines and
// the calls in flight.
//
// Run is safe for concurrent use; fn must be safe to call concurrently with
// itself.
func Run(ctx context.Context, count int, opts Options, fn func(ctx context.Context, i int) error) (succeeded int, err error) {
	if count <= 0 {
		return 0, nil
	}
	if fn == nil {
		return 0, errors.New("slowstart: nil fn")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	for start, size := 0, 0; start < count; start += size {
		if ctx.Err() != nil {
			return succeeded, stopped(ctx, start, count)
		}
		size = opts.nextSize(size, count-start)
		b := &batch{ctx: ctx, fn: fn, start: start, errs: make([]error, size)}
		b.wg.Add(size)
		for j := range size {
			go b.call(j)
		}
		b.wg.Wait()
		b.panics.Repanic()
		if err := b.err(); err != nil {
			return succeeded + size - len(err.Errs), err
		}
		succeeded += size
	}
	return succeeded, nil
}

// batch is what the goroutines of one batch share with Run.
type batch struct {
	ctx   context.Context
	fn    func(context.Context, int) error
	start int     // the index of the batch's first call
	errs  []error // errs[j] is the result of call start+j; each goroutine writes its own slot
	wg    sync.WaitGroup

	panics panics.Set
}

// call makes the batch's call number j (index start+j).
func (b *batch) call(j int) {
	defer b.wg.Done()
	i := b.start + j
	b.panics.Call(i, func() { b.errs[j] = b.fn(b.ctx, i) })
}

// err returns the BatchError of a joined batch, or nil if no call failed.
// The slots are in index order, so the failures are too.
func (b *batch) err() *BatchError {
	var e *BatchError
	for j, err := range b.errs {
		if err == nil {
			continue
		}
		if e == nil {
			e = &BatchError{Start: b.start, Size: len(b.errs)}
		}
		e.Indices = append(e.Indices, b.start+j)
		e.Errs = append(e.Errs, err)
	}
	return e
}

// stopped is the error for a run whose context was done before the batch
// starting at call done.
func stopped(ctx context.Context, done, count int) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && !errors.Is(cause, err) {
		return fmt.Errorf("slowstart: stopped before call %d of %d: %w: %w", done, count, err, cause)
	}
	if cause != nil {
		err = cause // it wraps ctx.Err() and says more
	}
	return fmt.Errorf("slowstart: stopped before call %d of %d: %w", done, count, err)
}
