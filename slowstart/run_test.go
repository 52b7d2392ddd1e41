package slowstart_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/slowstart"
)

// callErr is the failure of call i; comparable, so errors.Is matches it by
// value, and a distinct type, so errors.As can extract it.
type callErr struct{ i int }

func (e callErr) Error() string { return fmt.Sprintf("call %d failed", e.i) }

// harness records what Run does. Used inside a synctest bubble, every call
// sleeps for the same virtual second and virtual time stands still until all
// started calls are asleep, so the calls of one batch are exactly those that
// start at the same virtual instant, all in flight together before any of them
// returns: batches and concurrency are observed exactly, not timed.
type harness struct {
	ctx    context.Context  // the context every call must receive
	fail   func(i int) bool // nil: every call succeeds
	onCall func(i int)      // runs at the start of call i, before the sleep

	mu         sync.Mutex
	starts     []time.Time // the virtual instant each batch started, in order
	batches    [][]int     // indices called in each batch, in call order
	peak       []int       // maximum calls in flight during each batch
	inflight   int
	called     int
	returned   int
	overlap    bool // a batch started while calls of an earlier one were in flight
	wrongCtx   bool
	duplicates bool
	seen       map[int]bool
}

func newHarness(ctx context.Context) *harness {
	return &harness{ctx: ctx, seen: map[int]bool{}}
}

func (h *harness) fn(ctx context.Context, i int) error {
	h.mu.Lock()
	now := time.Now()
	if ctx != h.ctx {
		h.wrongCtx = true
	}
	if h.seen[i] {
		h.duplicates = true
	}
	h.seen[i] = true
	h.called++
	k := len(h.starts) - 1
	if k < 0 || !now.Equal(h.starts[k]) {
		// The first call of a new batch: the previous one must be joined.
		if h.inflight != 0 {
			h.overlap = true
		}
		h.starts = append(h.starts, now)
		h.batches = append(h.batches, nil)
		h.peak = append(h.peak, 0)
		k++
	}
	h.inflight++
	h.batches[k] = append(h.batches[k], i)
	h.peak[k] = max(h.peak[k], h.inflight)
	h.mu.Unlock()

	if h.onCall != nil {
		h.onCall(i)
	}
	time.Sleep(time.Second)

	h.mu.Lock()
	h.inflight--
	h.returned++
	h.mu.Unlock()
	if h.fail != nil && h.fail(i) {
		return callErr{i}
	}
	return nil
}

// sizes returns the size of each batch that ran, in order.
func (h *harness) sizes() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var sizes []int
	for _, b := range h.batches {
		sizes = append(sizes, len(b))
	}
	return sizes
}

// checkBatches asserts on what ran: batch sizes are a prefix of
// Plan (all of it when full), batch k got exactly the consecutive indices
// after batch k-1, every batch ran all its calls at once and only them, each
// batch started when the previous one had been joined, and every call
// returned before Run did.
func (h *harness) checkBatches(t assert.TestingT, count int, opts slowstart.Options, full bool) {
	sizes := h.sizes()
	h.mu.Lock()
	defer h.mu.Unlock()
	plan := slowstart.Plan(count, opts)
	if full {
		assert.Equal(t, plan, sizes, "batch sizes = Plan")
	} else if assert.LessOrEqual(t, len(sizes), len(plan)) && len(sizes) > 0 {
		assert.Equal(t, plan[:len(sizes)], sizes, "batch sizes are a prefix of Plan")
	}
	start := 0
	for k, size := range sizes {
		got := slices.Sorted(slices.Values(h.batches[k]))
		want := make([]int, size)
		for j := range want {
			want[j] = start + j
		}
		assert.Equal(t, want, got, "batch %d indices", k)
		assert.Equal(t, size, h.peak[k], "batch %d: calls in flight together (R-4.2)", k)
		if k > 0 {
			assert.Equal(t, time.Second, h.starts[k].Sub(h.starts[k-1]),
				"batch %d starts when batch %d has been joined (R-4.2)", k, k-1)
		}
		start += size
	}
	assert.False(t, h.overlap, "a batch started before the previous one was joined (R-4.2)")
	assert.False(t, h.wrongCtx, "a call did not get Run's context")
	assert.False(t, h.duplicates, "an index was called twice")
	assert.Equal(t, h.called, h.returned, "calls still running after Run returned")
	assert.Zero(t, h.inflight)
}

func (h *harness) calledIndices() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []int
	for _, b := range h.batches {
		all = append(all, b...)
	}
	slices.Sort(all)
	return all
}

func indices(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestRunBatches(t *testing.T) {
	cases := []struct {
		name  string
		count int
		opts  slowstart.Options
		sizes []int
	}{
		{"R-4.5 count 10", 10, slowstart.Options{InitialBatchSize: 1}, []int{1, 2, 4, 3}},
		{"R-4.5 count 500", 500, slowstart.Options{}, []int{1, 2, 4, 8, 16, 32, 64, 128, 245}},
		{"R-4.1 initial above count", 5, slowstart.Options{InitialBatchSize: 9}, []int{5}},
		{"R-4.4 deviation: initial 0 runs as 1", 10, slowstart.Options{InitialBatchSize: 0}, []int{1, 2, 4, 3}},
		{"R-4.4 deviation: negative initial runs as 1", 3, slowstart.Options{InitialBatchSize: -2}, []int{1, 2}},
		{"cap", 20, slowstart.Options{InitialBatchSize: 3, MaxBatchSize: 5}, []int{3, 5, 5, 5, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t.Context())
				got, err := slowstart.Run(t.Context(), c.count, c.opts, h.fn)
				require.NoError(t, err)
				assert.Equal(t, c.count, got, "R-4.3 succeeded")
				assert.Equal(t, c.sizes, h.sizes())
				assert.Equal(t, indices(0, c.count), h.calledIndices(), "every index once")
				h.checkBatches(t, c.count, c.opts, true)
			})
		})
	}
}

func TestRunNonPositiveCount(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, count := range []int{0, -1, math.MinInt} {
		t.Run(fmt.Sprint("R-4.4 count ", count), func(t *testing.T) {
			got, err := slowstart.Run(t.Context(), count, slowstart.Options{InitialBatchSize: 4}, func(context.Context, int) error {
				t.Error("fn called")
				return nil
			})
			assert.Zero(t, got)
			assert.NoError(t, err)

			// Whatever ctx and fn are.
			got, err = slowstart.Run(canceled, count, slowstart.Options{}, nil)
			assert.Zero(t, got)
			assert.NoError(t, err)
		})
	}
}

func TestRunBadInput(t *testing.T) {
	got, err := slowstart.Run(t.Context(), 3, slowstart.Options{}, nil)
	assert.Zero(t, got)
	assert.EqualError(t, err, "slowstart: nil fn")

	var nilCtx context.Context
	var calls []int
	got, err = slowstart.Run(nilCtx, 3, slowstart.Options{MaxBatchSize: 1}, func(ctx context.Context, i int) error {
		assert.NotNil(t, ctx, "nil ctx means context.Background")
		calls = append(calls, i) // MaxBatchSize 1: sequential
		return nil
	})
	assert.NoError(t, err)
	assert.Equal(t, 3, got)
	assert.Equal(t, []int{0, 1, 2}, calls)
}

func TestRunStopsAfterFailingBatch(t *testing.T) {
	cases := []struct {
		name      string
		count     int
		opts      slowstart.Options
		fail      func(i int) bool
		calls     int // indices [0, calls) are called
		succeeded int
		start     int
		size      int
		failed    []int
	}{
		{"R-4.3 one failure in batch 3", 10, slowstart.Options{}, func(i int) bool { return i == 4 }, 7, 6, 3, 4, []int{4}},
		{"R-4.3 failure in the last batch", 10, slowstart.Options{}, func(i int) bool { return i == 9 }, 10, 9, 7, 3, []int{9}},
		{"R-4.5 all fail from 1: one doomed call", 500, slowstart.Options{}, func(int) bool { return true }, 1, 0, 0, 1, []int{0}},
		{"R-4.5 all fail from 8: eight doomed calls", 500, slowstart.Options{InitialBatchSize: 8}, func(int) bool { return true }, 8, 0, 0, 8, indices(0, 8)},
		{"R-4.5 all fail, count below initial", 3, slowstart.Options{InitialBatchSize: 8}, func(int) bool { return true }, 3, 0, 0, 3, indices(0, 3)},
		{"R-4.3 failures from index 5 in a capped run", 20, slowstart.Options{MaxBatchSize: 2}, func(i int) bool { return i >= 5 }, 7, 5, 5, 2, []int{5, 6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t.Context())
				h.fail = c.fail
				got, err := slowstart.Run(t.Context(), c.count, c.opts, h.fn)
				assert.Equal(t, c.succeeded, got, "R-4.3 succeeded")
				assert.Equal(t, indices(0, c.calls), h.calledIndices(), "no batch after the failing one")
				h.checkBatches(t, c.count, c.opts, false)

				var be *slowstart.BatchError
				require.ErrorAs(t, err, &be)
				assert.Equal(t, c.start, be.Start)
				assert.Equal(t, c.size, be.Size)
				assert.Equal(t, c.failed, be.Indices)
				for _, i := range c.failed {
					assert.ErrorIs(t, err, callErr{i})
				}
			})
		})
	}
}

// The error wraps every failure of the batch in index order, although the
// calls fail in the reverse order.
func TestRunErrorWrapsAllFailuresInIndexOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentinel := map[int]error{3: errors.New("e3"), 5: errors.New("e5"), 6: errors.New("e6")}
		var mu sync.Mutex
		var failOrder []int
		got, err := slowstart.Run(t.Context(), 10, slowstart.Options{}, func(_ context.Context, i int) error {
			e, ok := sentinel[i]
			if !ok {
				return nil
			}
			time.Sleep(time.Duration(10-i) * time.Second) // 6 fails first, 3 last
			mu.Lock()
			failOrder = append(failOrder, i)
			mu.Unlock()
			if i == 5 {
				return fmt.Errorf("wrapped: %w", callErr{5})
			}
			return e
		})
		require.Equal(t, []int{6, 5, 3}, failOrder, "precondition: failures happen out of index order")
		assert.Equal(t, 4, got, "R-4.3: calls 0, 1, 2 and 4 succeeded")

		var be *slowstart.BatchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, []int{3, 5, 6}, be.Indices)
		require.Len(t, be.Errs, 3)
		assert.Same(t, sentinel[3], be.Errs[0])
		assert.Same(t, sentinel[6], be.Errs[2])
		assert.Equal(t, be.Errs, be.Unwrap())
		assert.Same(t, sentinel[3], be.First(), "first failure = lowest index")
		assert.Equal(t, "slowstart: call 3: e3 (and 2 more)", err.Error())

		assert.ErrorIs(t, err, sentinel[3])
		assert.ErrorIs(t, err, sentinel[6])
		assert.ErrorIs(t, err, callErr{5})
		var ce callErr
		require.ErrorAs(t, err, &ce, "errors.As reaches a failure nested in one of them")
		assert.Equal(t, callErr{5}, ce)
	})
}

func TestRunContext(t *testing.T) {
	t.Run("done before the first batch: no call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		got, err := slowstart.Run(ctx, 5, slowstart.Options{}, func(context.Context, int) error {
			t.Error("fn called")
			return nil
		})
		assert.Zero(t, got)
		assert.ErrorIs(t, err, context.Canceled)
		assert.EqualError(t, err, "slowstart: stopped before call 0 of 5: context canceled")
		var be *slowstart.BatchError
		assert.NotErrorAs(t, err, &be)
	})

	t.Run("canceled during a batch: the batch completes, no further batch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			h := newHarness(ctx)
			h.onCall = func(i int) {
				if i == 1 {
					cancel() // in batch 2, which also holds call 2
				}
			}
			got, err := slowstart.Run(ctx, 10, slowstart.Options{}, h.fn)
			assert.Equal(t, 3, got)
			assert.ErrorIs(t, err, context.Canceled)
			assert.EqualError(t, err, "slowstart: stopped before call 3 of 10: context canceled")
			assert.Equal(t, []int{0, 1, 2}, h.calledIndices())
			assert.Equal(t, []int{1, 2}, h.sizes())
			h.checkBatches(t, 10, slowstart.Options{}, false)
		})
	})

	t.Run("deadline between batches", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Each batch takes one virtual second: batches start at 0 s, 1 s,
			// 2 s; the deadline at 2.5 s stops the fourth.
			ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
			defer cancel()
			h := newHarness(ctx)
			got, err := slowstart.Run(ctx, 100, slowstart.Options{}, h.fn)
			assert.Equal(t, 7, got)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, []int{1, 2, 4}, h.sizes())
			h.checkBatches(t, 100, slowstart.Options{}, false)
		})
	})

	t.Run("a failure in the canceled batch is reported as the batch error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			h := newHarness(ctx)
			h.onCall = func(i int) {
				if i == 1 {
					cancel()
				}
			}
			h.fail = func(i int) bool { return i == 2 }
			got, err := slowstart.Run(ctx, 10, slowstart.Options{}, h.fn)
			assert.Equal(t, 2, got)
			assert.ErrorIs(t, err, callErr{2})
			assert.NotErrorIs(t, err, context.Canceled)
		})
	})

	t.Run("cause", func(t *testing.T) {
		cause := errors.New("shutting down")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(cause)
		_, err := slowstart.Run(ctx, 1, slowstart.Options{}, func(context.Context, int) error { return nil })
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, cause)
		assert.EqualError(t, err, "slowstart: stopped before call 0 of 1: context canceled: shutting down")

		// A cause that already wraps ctx.Err() is reported alone.
		wrapping := fmt.Errorf("draining: %w", context.Canceled)
		ctx, cancel = context.WithCancelCause(t.Context())
		cancel(wrapping)
		_, err = slowstart.Run(ctx, 1, slowstart.Options{}, func(context.Context, int) error { return nil })
		assert.ErrorIs(t, err, wrapping)
		assert.EqualError(t, err, "slowstart: stopped before call 0 of 1: draining: context canceled")
	})
}

type panicValue struct{ msg string }

func TestRunPanic(t *testing.T) {
	t.Run("re-raised with the original value after the batch joined", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			pv := &panicValue{"boom"}
			h := newHarness(t.Context())
			h.onCall = func(i int) {
				if i == 4 { // batch [3, 7) of count 20
					panic(pv)
				}
			}
			var recovered any
			func() {
				defer func() {
					recovered = recover()
					h.mu.Lock()
					defer h.mu.Unlock()
					// Calls 0-3, 5, 6 returned before the panic reached us.
					assert.Equal(t, 6, h.returned, "the rest of the batch returned before the re-panic")
					assert.Equal(t, 7, h.called)
				}()
				_, _ = slowstart.Run(t.Context(), 20, slowstart.Options{}, h.fn)
				t.Error("Run returned normally")
			}()
			assert.Same(t, pv, recovered)
			assert.Equal(t, indices(0, 7), h.calledIndices(), "no batch after the panic")
		})
	})

	t.Run("lowest index wins", func(t *testing.T) {
		for _, lowFirst := range []bool{true, false} {
			synctest.Test(t, func(t *testing.T) {
				got := recoverRun(func() {
					_, _ = slowstart.Run(t.Context(), 7, slowstart.Options{}, func(_ context.Context, i int) error {
						switch {
						case i == 3 && lowFirst, i == 6 && !lowFirst:
							panic(i)
						case i == 3, i == 6:
							time.Sleep(time.Second)
							panic(i)
						}
						return nil
					})
				})
				assert.Equal(t, 3, got, "lowFirst %v", lowFirst)
			})
		}
	})

	t.Run("error value and panic(nil) keep their identity", func(t *testing.T) {
		boom := errors.New("boom")
		got := recoverRun(func() {
			_, _ = slowstart.Run(t.Context(), 1, slowstart.Options{}, func(context.Context, int) error { panic(boom) })
		})
		assert.Same(t, boom, got)

		got = recoverRun(func() {
			_, _ = slowstart.Run(t.Context(), 1, slowstart.Options{}, func(context.Context, int) error { panic(nil) })
		})
		assert.IsType(t, (*runtime.PanicNilError)(nil), got)
	})

}

func recoverRun(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// A call that ends its goroutine with runtime.Goexit (t.FailNow) ends the
// caller's goroutine too, after the batch joined, like errgroup.
func TestRunGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var returned, after bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = slowstart.Run(t.Context(), 3, slowstart.Options{}, func(_ context.Context, i int) error {
				switch i {
				case 1:
					runtime.Goexit()
				case 2:
					time.Sleep(time.Second)
					returned = true // read after done is closed
				}
				return nil
			})
			after = true
		}()
		<-done
		assert.True(t, returned, "the batch joined before Goexit")
		assert.False(t, after, "Run's caller continued after Goexit")
	})
}

// TestRunProperty drives Run over random counts, options, failures and
// cancellation points and compares it with a model of docs/rules.md §4.
func TestRunProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		count := rapid.IntRange(-2, 200).Draw(rt, "count")
		opts := slowstart.Options{
			InitialBatchSize: rapid.IntRange(-1, 40).Draw(rt, "initial"),
			MaxBatchSize:     rapid.IntRange(-1, 70).Draw(rt, "max"),
		}
		// Calls firstFail, firstFail+stride, … fail; none when firstFail >= count.
		firstFail, stride := max(count, 0), 1
		if count > 0 && rapid.Bool().Draw(rt, "fail") {
			firstFail = rapid.IntRange(0, count-1).Draw(rt, "firstFail")
			stride = rapid.IntRange(1, 4).Draw(rt, "stride")
		}
		// -1: canceled before Run; >= count: never; else canceled when call cancelAt starts.
		cancelAt := max(count, 0)
		switch {
		case rapid.Bool().Draw(rt, "cancel") && count > 0:
			cancelAt = rapid.IntRange(0, count-1).Draw(rt, "cancelAt")
		case rapid.IntRange(0, 9).Draw(rt, "cancelBeforeRun") == 0:
			cancelAt = -1
		}
		fails := func(i int) bool { return i >= firstFail && (i-firstFail)%stride == 0 }

		// The model.
		var (
			wantCalls     []int
			wantSucceeded int
			wantFailed    []int
			wantCanceled  bool
			canceled      = cancelAt < 0
			done          int
		)
		if count > 0 {
			for _, size := range slowstart.Plan(count, opts) {
				if canceled {
					wantCanceled = true
					break
				}
				for i := done; i < done+size; i++ {
					wantCalls = append(wantCalls, i)
					if i == cancelAt {
						canceled = true
					}
					if fails(i) {
						wantFailed = append(wantFailed, i)
					}
				}
				wantSucceeded += size - len(wantFailed)
				done += size
				if len(wantFailed) > 0 {
					break
				}
			}
		}

		rapid.SyncTest(rt, func(rt *rapid.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if cancelAt < 0 {
				cancel()
			}
			h := newHarness(ctx)
			h.fail = fails
			h.onCall = func(i int) {
				if i == cancelAt {
					cancel()
				}
			}
			got, err := slowstart.Run(ctx, count, opts, h.fn)

			assert.Equal(rt, wantCalls, h.calledIndices(), "calls (no call after cancellation or failure)")
			assert.Equal(rt, wantSucceeded, got, "succeeded")
			h.checkBatches(rt, count, opts, len(wantFailed) == 0 && !wantCanceled)
			assert.Equal(rt, h.sizes(), batchesRun(count, opts, got, err),
				"the batches run are derived from Plan and Run's results as Plan documents")

			switch {
			case len(wantFailed) > 0:
				var be *slowstart.BatchError
				if assert.ErrorAs(rt, err, &be) {
					assert.Equal(rt, wantFailed, be.Indices)
					assert.Len(rt, be.Errs, len(wantFailed))
				}
				for _, i := range wantFailed {
					assert.ErrorIs(rt, err, callErr{i}, "failure %d reachable", i)
				}
				assert.NotErrorIs(rt, err, context.Canceled)
			case wantCanceled:
				assert.ErrorIs(rt, err, context.Canceled)
			default:
				assert.NoError(rt, err)
			}
		})
	})
}

// batchesRun derives the batches a run made from its results, as Plan's doc
// comment tells callers to: the prefix of Plan covering the calls made.
func batchesRun(count int, opts slowstart.Options, succeeded int, err error) []int {
	calls := count
	if be := (*slowstart.BatchError)(nil); errors.As(err, &be) {
		calls = be.Start + be.Size
	} else if err != nil {
		calls = succeeded // the context stopped the run
	}
	var batches []int
	for _, size := range slowstart.Plan(count, opts) {
		if calls <= 0 {
			break
		}
		batches = append(batches, size)
		calls -= size
	}
	return batches
}

// A no-op run allocates a constant amount, not one closure (or more) per
// call. The bound leaves room for the runtime allocating a fresh goroutine
// when its free list is empty; a per-call allocation would cost >= 500.
func TestRunAllocations(t *testing.T) {
	noop := func(context.Context, int) error { return nil }
	for _, count := range []int{1, 10, 500} {
		allocs := testing.AllocsPerRun(20, func() {
			_, _ = slowstart.Run(context.Background(), count, slowstart.Options{}, noop)
		})
		assert.LessOrEqual(t, allocs, 20.0, "count %d", count)
	}
}

// BenchmarkRun measures Run's own overhead: fn does nothing, so ns/op is
// starting and joining the goroutines plus the batching (ns/call divides it by
// count). allocs/op is heap allocations as testing counts them
// (runtime.MemStats.Mallocs): Run's fixed two, the shared batch state and the
// method value its goroutines run. Starting a goroutine reuses the descriptor
// and stack of an exited one from the runtime's free lists and is not
// counted; only a goroutine the runtime must create anew (a new high of
// concurrency, early iterations) shows up as an allocation.
func BenchmarkRun(b *testing.B) {
	noop := func(context.Context, int) error { return nil }
	ctx := context.Background()
	for _, count := range []int{1, 10, 500} {
		b.Run(fmt.Sprint("count=", count), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := slowstart.Run(ctx, count, slowstart.Options{}, noop); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/call")
		})
	}
}

// BenchmarkRunFailure measures the failure path: with every call failing,
// a run is one call and the BatchError.
func BenchmarkRunFailure(b *testing.B) {
	boom := errors.New("boom")
	fail := func(context.Context, int) error { return boom }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := slowstart.Run(ctx, 500, slowstart.Options{}, fail); err == nil {
			b.Fatal("no error")
		}
	}
}
