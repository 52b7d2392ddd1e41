package slowstart_test

import (
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/slowstart"
)

func TestPlan(t *testing.T) {
	cases := []struct {
		name  string
		count int
		opts  slowstart.Options
		want  []int
	}{
		{"R-4.5 count 10 from 1", 10, slowstart.Options{InitialBatchSize: 1}, []int{1, 2, 4, 3}},
		{"R-4.5 count 500 from 1", 500, slowstart.Options{InitialBatchSize: 1}, []int{1, 2, 4, 8, 16, 32, 64, 128, 245}},
		{"R-4.5 zero options are initial 1 (R-1.2)", 10, slowstart.Options{}, []int{1, 2, 4, 3}},
		{"R-4.1 exact power of two", 7, slowstart.Options{}, []int{1, 2, 4}},
		{"R-4.1 count 1", 1, slowstart.Options{}, []int{1}},
		{"R-4.1 initial 3 doubles", 10, slowstart.Options{InitialBatchSize: 3}, []int{3, 6, 1}},
		{"R-4.1 initial above count is one batch", 5, slowstart.Options{InitialBatchSize: 8}, []int{5}},
		{"R-4.4 count 0", 0, slowstart.Options{}, nil},
		{"R-4.4 negative count", -3, slowstart.Options{InitialBatchSize: 4}, nil},
		{"R-4.4 deviation: initial 0 means 1", 10, slowstart.Options{InitialBatchSize: 0}, []int{1, 2, 4, 3}},
		{"R-4.4 deviation: negative initial means 1", 10, slowstart.Options{InitialBatchSize: -7}, []int{1, 2, 4, 3}},
		{"cap limits every batch", 10, slowstart.Options{MaxBatchSize: 2}, []int{1, 2, 2, 2, 2, 1}},
		{"cap limits the first batch", 10, slowstart.Options{InitialBatchSize: 5, MaxBatchSize: 3}, []int{3, 3, 3, 1}},
		{"cap 100 on 500", 500, slowstart.Options{MaxBatchSize: 100}, []int{1, 2, 4, 8, 16, 32, 64, 100, 100, 100, 73}},
		{"cap 1 is sequential", 3, slowstart.Options{InitialBatchSize: 4, MaxBatchSize: 1}, []int{1, 1, 1}},
		{"negative cap means no cap", 10, slowstart.Options{MaxBatchSize: -1}, []int{1, 2, 4, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, slowstart.Plan(c.count, c.opts))
		})
	}
}

// doubling must not overflow for huge counts.
func TestPlanHugeCount(t *testing.T) {
	got := slowstart.Plan(math.MaxInt, slowstart.Options{})
	assert.Len(t, got, 63) // 1 + ⌊log2(MaxInt)⌋
	sum := 0
	for _, s := range got {
		assert.Positive(t, s)
		sum += s
	}
	assert.Equal(t, math.MaxInt, sum)

	assert.Equal(t, []int{math.MaxInt}, slowstart.Plan(math.MaxInt, slowstart.Options{InitialBatchSize: math.MaxInt}))
	// Twice half overflows int (on 32- and 64-bit platforms alike).
	half := math.MaxInt/2 + 1
	assert.Equal(t, []int{half, math.MaxInt - half}, slowstart.Plan(math.MaxInt, slowstart.Options{InitialBatchSize: half}))
}

// DESIGN.md fixes Options as exactly two int fields, so callers may write
// unkeyed literals and compare Options with ==. The conversion below compiles
// only while Options has exactly these fields, in this order, with these types.
func TestOptionsShape(t *testing.T) {
	type shape = struct {
		InitialBatchSize int
		MaxBatchSize     int
	}
	opts := slowstart.Options(shape{3, 4})
	assert.True(t, opts == slowstart.Options{InitialBatchSize: 3, MaxBatchSize: 4}, "comparable with ==")
	assert.False(t, opts == slowstart.Options{InitialBatchSize: 3})
	assert.Equal(t, []int{3, 4, 3}, slowstart.Plan(10, opts))
}

func TestPlanProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		count := rapid.IntRange(-5, 5000).Draw(t, "count")
		initial := rapid.IntRange(-3, 600).Draw(t, "initial")
		maxSize := rapid.IntRange(-3, 600).Draw(t, "max")
		opts := slowstart.Options{InitialBatchSize: initial, MaxBatchSize: maxSize}

		plan := slowstart.Plan(count, opts)
		if count <= 0 {
			assert.Nil(t, plan, "R-4.4")
			return
		}
		effInitial, capped := max(initial, 1), maxSize > 0

		sum := 0
		for k, size := range plan {
			remaining := count - sum
			var want int
			if k == 0 {
				want = min(remaining, effInitial)
			} else {
				want = min(2*plan[k-1], remaining)
			}
			if capped {
				want = min(want, maxSize)
			}
			assert.Equal(t, want, size, "batch %d (R-4.1)", k)
			sum += size
		}
		assert.Equal(t, count, sum, "the plan covers every call")

		if !capped {
			// number of batches = 1 + ⌊log2(⌈N/initial⌉)⌋.
			ceil := (count + effInitial - 1) / effInitial
			assert.Len(t, plan, bits.Len(uint(ceil)), "R-4.5")
		}
	})
}
