package slowstart

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/reconcilekit/reconcilekit/internal/panics"
)

// Run calls fn count times, each with a distinct index in [0, count), in
// batches whose sizes double ([Plan] gives them; docs/rules.md §4). The
// calls of a batch run concurrently and Run waits for all of them; after a
// batch with a failure it starts no other and returns a [*BatchError]
// wrapping every failure of that batch. It returns the number of calls that
// returned nil and, if the run stopped early, why: that error, or one
// wrapping ctx.Err() when ctx is done before a batch (a started batch
// always completes). A panic or runtime.Goexit in fn is re-raised on the
// caller's goroutine, value unchanged, once its batch has returned. No
// goroutine outlives Run. count <= 0 makes no call and returns (0, nil); a
// nil fn with count > 0 is an error; a nil ctx means context.Background.
// Run is safe for concurrent use; fn must be safe to call concurrently with
// itself. The details (ordering, panics, cost): docs/design/batches.md.
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
	b := &batch{ctx: ctx, fn: fn}
	// One method value for the whole run: `go work()` then allocates nothing
	// per call, unlike a fresh closure (or sync.WaitGroup.Go) per goroutine.
	// A plain `go b.call(j)` with an error slot per call was measured slower
	// (docs/design/slowstart.md).
	work := b.work
	for done, size := 0, 0; done < count; done += size {
		if ctx.Err() != nil {
			return succeeded, stopped(ctx, done, count)
		}
		size = opts.nextSize(size, count-done)
		b.first = done
		b.next.Store(0)
		b.wg.Add(size)
		for range size {
			go work()
		}
		b.wg.Wait()
		// Every goroutine of the batch has called Done: the fields below are
		// no longer written and Wait ordered those writes before these reads.
		b.panics.Repanic()
		succeeded += size - len(b.failures)
		if len(b.failures) > 0 {
			return succeeded, b.err(size)
		}
	}
	return succeeded, nil
}

// batch is the state shared by Run and the goroutines of its current batch.
// Run reuses it for every batch of one run.
type batch struct {
	ctx   context.Context
	fn    func(context.Context, int) error
	first int          // index of the batch's first call; written before the goroutines start
	next  atomic.Int64 // hands out the batch's indices, one per goroutine
	wg    sync.WaitGroup

	// mu guards the fields below against the batch's goroutines; Run reads
	// them only after wg.Wait.
	mu       sync.Mutex
	failures []failure // nil until a call fails

	panics panics.Set
}

type failure struct {
	index int
	err   error
}

// work makes one call of the batch. The index comes from a shared counter
// rather than an argument so that the goroutine needs no closure of its own.
func (b *batch) work() {
	defer b.wg.Done()
	i := b.first + int(b.next.Add(1)) - 1
	var err error
	if b.panics.Call(i, func() { err = b.fn(b.ctx, i) }) && err != nil {
		b.mu.Lock()
		b.failures = append(b.failures, failure{i, err})
		b.mu.Unlock()
	}
}

// err builds the BatchError of a joined batch with failures.
func (b *batch) err(size int) *BatchError {
	slices.SortFunc(b.failures, func(x, y failure) int { return cmp.Compare(x.index, y.index) })
	e := &BatchError{
		Start:   b.first,
		Size:    size,
		Indices: make([]int, len(b.failures)),
		Errs:    make([]error, len(b.failures)),
	}
	for j, f := range b.failures {
		e.Indices[j], e.Errs[j] = f.index, f.err
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
