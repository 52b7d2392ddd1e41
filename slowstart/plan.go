package slowstart

// Options configures [Run] and [Plan]. The zero value reproduces upstream's
// slowStartBatch with SlowStartInitialBatchSize = 1: batches
// of 1, 2, 4, … with no cap.
//
// Options is a plain comparable value with exactly the two fields below; it
// holds no state, so one value may be shared by any number of concurrent
// [Run] calls.
type Options struct {
	// InitialBatchSize is the size of the first batch. A value <= 0 means 1.
	//
	// Deviation from upstream: upstream makes zero calls and
	// returns (0, nil) when the initial batch size is <= 0, silently dropping
	// all the work; here it means the default size 1, so the zero Options value
	// is useful.
	InitialBatchSize int

	// MaxBatchSize caps every batch, and therefore the number of calls of fn
	// in flight at once. A value <= 0 means no cap, as upstream (which has none).
	MaxBatchSize int
}

// Plan returns the batch sizes that [Run] uses for count calls with opts when
// every call succeeds: the first size is min(count, InitialBatchSize,
// MaxBatchSize) and each later one min(2·previous, remaining, MaxBatchSize),
// with the <= 0 defaults of [Options]. The sizes are all
// positive and sum to count.
//
// A run that stops early (a failed batch, a done context) ran a prefix of
// this plan, so callers that report batch sizes (metrics, events) derive them
// after Run returns: the batches run are the shortest prefix of Plan(count,
// opts) whose sizes add up to at least the number of calls made (they add up
// to exactly that number). When Run returns, the calls made are
//
//   - count, when err is nil;
//   - be.Start + be.Size, when err is a [*BatchError] be;
//   - succeeded, when the context stopped the run (every batch before it
//     succeeded in full).
//
// Plan returns nil when count <= 0. It is pure and safe for concurrent use.
// The result has one element per batch, so with a small MaxBatchSize and a
// huge count it is about count/MaxBatchSize long.
func Plan(count int, opts Options) []int {
	n := 0
	for done, size := 0, 0; done < count; done += size {
		size = opts.nextSize(size, count-done)
		n++
	}
	if n == 0 {
		return nil
	}
	sizes := make([]int, 0, n)
	for done, size := 0, 0; done < count; done += size {
		size = opts.nextSize(size, count-done)
		sizes = append(sizes, size)
	}
	return sizes
}

// nextSize is the single step function shared by [Plan] and [Run]: the size of
// the batch after one of size prev (0 before the first batch) when remaining
// > 0 calls are left. The result is in [1, remaining].
func (o Options) nextSize(prev, remaining int) int {
	var size int
	switch {
	case prev <= 0:
		size = max(o.InitialBatchSize, 1)
	case prev > remaining/2:
		// 2·prev >= remaining (and computing 2·prev might overflow).
		size = remaining
	default:
		size = 2 * prev
	}
	size = min(size, remaining)
	if o.MaxBatchSize > 0 {
		size = min(size, o.MaxBatchSize)
	}
	return size
}
