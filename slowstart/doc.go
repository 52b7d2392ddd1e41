// Package slowstart runs many similar calls in doubling batches that stop at
// the first batch with a failure.
//
// A controller that must create hundreds of pods should not fire them all at
// once when the API server is going to reject every one of them (exhausted
// quota, a failing admission webhook, a terminating namespace): that floods
// the API server and the event stream. [Run] sends 1, 2, 4, … calls, waits for
// each batch, and stops after the first batch in which a call failed, so at
// most one batch of doomed calls is made. [Plan] returns the batch sizes
// without calling anything, for logs, docs and tests.
//
// Upstream behaviour (docs/rules.md §4, slowStartBatch) is reproduced with the zero
// [Options]:
//
//   - the first batch has min(count, InitialBatchSize) calls and each
//     batch after a fully successful one has min(2·previous, remaining).
//   - the calls of a batch run concurrently and the batch is joined
//     before the next one starts.
//   - succeeded counts the calls that returned nil, including those of
//     the failing batch; no batch starts after one with a failure.
//   - count <= 0 makes no call and returns (0, nil).
//   - with InitialBatchSize 1, count 10 runs batches 1, 2, 4, 3 and
//     count 500 runs 1, 2, 4, 8, 16, 32, 64, 128, 245; when every call fails
//     only min(count, InitialBatchSize) calls are made.
//
// Beyond upstream, and where it deliberately differs:
//
//   - fn receives its call index i; the indices of a run are distinct and
//     cover [0, count) when nothing fails, batch k taking the consecutive
//     range after batch k-1.
//   - [Options.MaxBatchSize] caps the batch size, so the calls in flight.
//   - The error is a [*BatchError] wrapping every failure of the failing
//     batch in index order ([errors.Is] and [errors.As] reach each one);
//     [BatchError.First] gives the single error upstream would return.
//   - A done context starts no further batch and its error is returned; a
//     started batch always completes and its calls get the context.
//   - A panic in fn is re-raised on the caller's goroutine with its original
//     value once the whole batch has returned; it never crashes the process
//     from a worker goroutine and is never swallowed. errgroup, by contrast,
//     lets such a panic crash the process; we propagate it because our
//     callers (controller-runtime recovers reconciler panics by default)
//     may keep running, and must then learn which calls did not happen.
//   - No goroutine outlives [Run].
//   - A non-positive [Options.InitialBatchSize] means 1, where upstream makes
//     zero calls (R-4.4 deviation, documented on the field).
//   - Nothing logs. A run's batches are the prefix of [Plan] that covers the
//     calls it made, so callers derive batch sizes for their metrics or
//     events after [Run] returns (see [Plan]).
//
// Cost: one goroutine per call and no other per-call allocation; a run
// allocates a constant amount plus, on failure, the [*BatchError]
// (BenchmarkRun measures it).
package slowstart
