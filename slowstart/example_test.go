package slowstart_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/reconcilekit/reconcilekit/slowstart"
)

// Upstream's batches for 10 and 500 calls (R-4.5), and a capped plan.
func ExamplePlan() {
	fmt.Println(slowstart.Plan(10, slowstart.Options{}))
	fmt.Println(slowstart.Plan(500, slowstart.Options{}))
	fmt.Println(slowstart.Plan(500, slowstart.Options{InitialBatchSize: 4, MaxBatchSize: 100}))
	// Output:
	// [1 2 4 3]
	// [1 2 4 8 16 32 64 128 245]
	// [4 8 16 32 64 100 100 100 76]
}

// A run that stopped early made a prefix of its Plan: the batches that cover
// the calls made, here be.Start+be.Size. Callers report batch sizes this way.
func ExamplePlan_batchesRun() {
	opts := slowstart.Options{}
	_, err := slowstart.Run(context.Background(), 100, opts, func(ctx context.Context, i int) error {
		if i == 5 {
			return errors.New("quota exceeded")
		}
		return nil
	})
	var be *slowstart.BatchError
	if errors.As(err, &be) {
		calls := be.Start + be.Size
		var batches []int
		for _, size := range slowstart.Plan(100, opts) {
			if calls <= 0 {
				break
			}
			batches = append(batches, size)
			calls -= size
		}
		fmt.Println(err)
		fmt.Println("batches:", batches)
	}
	// Output:
	// slowstart: call 5: quota exceeded
	// batches: [1 2 4]
}

func ExampleRun() {
	names := make([]string, 10)
	opts := slowstart.Options{}
	created, err := slowstart.Run(context.Background(), len(names), opts, func(ctx context.Context, i int) error {
		names[i] = fmt.Sprintf("pod-%d", i) // each index is called once: no race
		return nil
	})
	fmt.Println(created, err, names[0], names[9])
	fmt.Println("batches:", slowstart.Plan(len(names), opts))
	// Output:
	// 10 <nil> pod-0 pod-9
	// batches: [1 2 4 3]
}

// Calls 3 and more fail: the batch [3, 7) is the last one to run, and the
// error lists its four failures.
func ExampleRun_failure() {
	errQuota := errors.New("quota exceeded")
	created, err := slowstart.Run(context.Background(), 100, slowstart.Options{}, func(ctx context.Context, i int) error {
		if i >= 3 {
			return fmt.Errorf("pod-%d: %w", i, errQuota)
		}
		return nil
	})
	fmt.Println(created)
	fmt.Println(err)
	fmt.Println(errors.Is(err, errQuota))

	var be *slowstart.BatchError
	if errors.As(err, &be) {
		fmt.Println(be.Start, be.Size, be.Indices)
		fmt.Println(be.First())
	}
	// Output:
	// 3
	// slowstart: call 3: pod-3: quota exceeded (and 3 more)
	// true
	// 3 4 [3 4 5 6]
	// pod-3: quota exceeded
}

// A canceled context starts no further batch.
func ExampleRun_cancel() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created, err := slowstart.Run(ctx, 100, slowstart.Options{}, func(ctx context.Context, i int) error {
		if i == 1 {
			cancel() // the batch of calls 1 and 2 still completes
		}
		return nil
	})
	fmt.Println(created, errors.Is(err, context.Canceled))
	fmt.Println(err)
	// Output:
	// 3 true
	// slowstart: stopped before call 3 of 100: context canceled
}
