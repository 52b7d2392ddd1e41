package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/slowstart"
)

// TestRunMatchesSlowStartBatch feeds slowstart.Run (no cap) and upstream's
// slowStartBatch the same count, initial batch size and failure pattern (the
// set of call positions that fail; batch k always covers the positions
// right after batch k-1's, in both) and compares the number of calls made
// (which is where the batches stop), the successes, and the error: upstream
// returns one failure of the failed batch, which must be among the failures
// Run's error wraps, and Run's error wraps exactly the failures of the
// positions its last batch covered. A non-positive initial batch size is
// excSlowStartInitial: Run treats it as 1, so it is compared with upstream
// run with 1.
func TestRunMatchesSlowStartBatch(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			count := rapid.IntRange(-1, 70).Draw(t, "count")
			if rapid.IntRange(0, 19).Draw(t, "burst") == 0 {
				count = rapid.SampledFrom([]int{255, 256, 500, 501}).Draw(t, "largeCount")
			}
			initial := rapid.SampledFrom([]int{1, 1, 1, 2, 3, 5, 0, -1}).Draw(t, "initial")
			fails := map[int]bool{}
			for _, i := range rapid.SliceOfN(rapid.IntRange(0, max(count, 1)), 0, 3).Draw(t, "failAt") {
				fails[i] = true
			}
			errAt := make([]error, max(count, 0))
			for i := range errAt {
				errAt[i] = fmt.Errorf("call %d failed", i)
			}

			upInitial := initial
			if initial <= 0 && count > 0 {
				noteDocumented(excSlowStartInitial)
				upInitial = 1
			}
			var upCalls atomic.Int64
			upOK, upErr := upstreamSlowStartBatch(count, upInitial, func() error {
				i := int(upCalls.Add(1) - 1)
				if fails[i] {
					return errAt[i]
				}
				return nil
			})

			var calls atomic.Int64
			var maxIndex atomic.Int64
			ok, err := slowstart.Run(context.Background(), count, slowstart.Options{InitialBatchSize: initial}, func(_ context.Context, i int) error {
				calls.Add(1)
				for {
					m := maxIndex.Load()
					if int64(i) <= m || maxIndex.CompareAndSwap(m, int64(i)) {
						break
					}
				}
				if fails[i] {
					return errAt[i]
				}
				return nil
			})
			addCases(1)
			if calls.Load() != upCalls.Load() || ok != upOK || (err == nil) != (upErr == nil) {
				t.Fatalf("Run(%d, initial %d) = %d calls, %d ok, %v; slowStartBatch = %d calls, %d ok, %v",
					count, initial, calls.Load(), ok, err, upCalls.Load(), upOK, upErr)
			}
			if calls.Load() > 0 && maxIndex.Load() != calls.Load()-1 {
				t.Fatalf("Run's indices are not the first %d positions (max %d)", calls.Load(), maxIndex.Load())
			}
			if err != nil {
				if !errors.Is(err, upErr) {
					t.Fatalf("upstream's error %v is not among Run's %v", upErr, err)
				}
				var be *slowstart.BatchError
				if !errors.As(err, &be) {
					t.Fatalf("Run's error %T is not a *slowstart.BatchError", err)
				}
				var want []error
				// The failures are the failing positions of the last batch:
				// every failing position below the number of calls made,
				// since earlier batches had none.
				for i := 0; i < int(calls.Load()); i++ {
					if fails[i] {
						want = append(want, errAt[i])
					}
				}
				if !slices.Equal(be.Unwrap(), want) {
					t.Fatalf("Run's error wraps %v, want %v", be.Unwrap(), want)
				}
			}
		})
	})
}
