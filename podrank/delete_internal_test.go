package podrank

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestPropertySelectAt checks selectAt on values full of ties: the values
// are only permuted, and a[i] is where sorting would put it.
func TestPropertySelectAt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vals := rapid.SliceOfN(rapid.IntRange(0, 5), 1, 300).Draw(t, "vals")
		i := rapid.IntRange(0, len(vals)-1).Draw(t, "i")
		a := make([]int32, len(vals))
		for x := range a {
			a[x] = int32(x)
		}
		byVal := func(x, y int32) int { return cmp.Compare(vals[x], vals[y]) }
		selectAt(a, i, byVal)

		got := slices.Clone(a)
		slices.Sort(got)
		for x := range got {
			require.Equal(t, int32(x), got[x], "not a permutation")
		}
		for _, x := range a[:i] {
			require.LessOrEqual(t, vals[x], vals[a[i]])
		}
		for _, x := range a[i+1:] {
			require.GreaterOrEqual(t, vals[x], vals[a[i]])
		}
	})
}

// TestSelectAtBoundsComparisons: a comparator on which every pivot is as
// poor as can be (everything else goes before it) makes quickselect
// quadratic; selectAt must give up on it and sort instead, and still only
// permute.
func TestSelectAtBoundsComparisons(t *testing.T) {
	const n = 2000
	a := make([]int32, n)
	for x := range a {
		a[x] = int32(x)
	}
	calls := 0
	selectAt(a, n/2, func(x, y int32) int {
		calls++
		if x == y {
			return 0
		}
		return -1
	})
	assert.Less(t, calls, n*n/20, "comparisons")
	slices.Sort(a)
	for x := range a {
		require.Equal(t, int32(x), a[x], "not a permutation")
	}
}
