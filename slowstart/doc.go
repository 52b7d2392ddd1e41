// Package slowstart runs many similar calls in doubling batches that stop at
// the first batch with a failure, so that an API server about to refuse
// every call receives at most one batch of them.
//
// The one thing to know: a batch is the unit of concurrency and of failure.
// [Run] calls fn 1, 2, 4, … times at once, waits for each batch, and starts
// no batch after one in which a call failed; the error wraps every failure of
// that batch ([*BatchError]), and a panic in fn is re-raised on the caller's
// goroutine once the batch has returned. [Plan] gives the batch sizes
// without calling anything.
//
// Zero [Options] follow upstream's slowStartBatch (rules of
// the repository's docs/rules.md), except that a non-positive
// InitialBatchSize means 1; docs/design/slowstart.md has the longer notes.
package slowstart
