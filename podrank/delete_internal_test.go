package podrank

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// TestPropertyPartition checks partition on keys full of ties, through
// both quickselect and its sorting fallback: the keys are kept, and none
// of a[n:] goes before one of a[:n]. With a zero Now the order is a
// strict weak one, so that is well defined.
func TestPropertyPartition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.IntRange(0, 300).Draw(t, "m")
		pods := make([]*corev1.Pod, m)
		keys := make([]key, m)
		for i := range keys {
			pods[i] = &corev1.Pod{}
			pods[i].UID = types.UID(rapid.SampledFrom([]string{"a", "b", "abcdefgh-1", "abcdefgh-2"}).Draw(t, "uid"))
			keys[i] = key{
				head:       uint64(rapid.IntRange(0, 3).Draw(t, "head")) << readyShift,
				rank:       int64(rapid.IntRange(0, 2).Draw(t, "rank")),
				readySec:   int64(rapid.IntRange(0, 2).Draw(t, "ready")),
				createdSec: int64(rapid.IntRange(0, 2).Draw(t, "created")),
				regular:    int32(rapid.IntRange(0, 1).Draw(t, "restarts")),
				pos:        int32(i),
				flags:      tailDone,
			}
		}
		c := newConfig(Options{}, pods)
		n := rapid.IntRange(0, m).Draw(t, "n")
		budget := rapid.SampledFrom([]int{0, 1, 2, 100}).Draw(t, "budget")
		a := slices.Clone(keys)
		c.partitionWithin(a, n, budget, rapid.Bool().Draw(t, "coarse"))

		pos := func(ks []key) []int32 {
			out := make([]int32, len(ks))
			for i := range ks {
				out[i] = ks[i].pos
			}
			slices.Sort(out)
			return out
		}
		require.Equal(t, pos(keys), pos(a), "keys lost or duplicated")
		for i := range a[:n] {
			for j := n; j < len(a); j++ {
				require.LessOrEqual(t, c.compare(&a[i], &a[j]), 0, "a[%d] goes after a[%d]", i, j)
			}
		}
	})
}
