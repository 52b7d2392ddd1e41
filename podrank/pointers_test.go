package podrank_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/podrank"
)

func TestPointers(t *testing.T) {
	assert.Nil(t, podrank.Pointers(nil), "nil in, nil out")
	assert.Nil(t, podrank.Pointers([]corev1.Pod{}), "empty in, nil out")

	pods := make([]corev1.Pod, 3)
	got := podrank.Pointers(pods)
	require.Len(t, got, 3)
	for i := range pods {
		assert.Same(t, &pods[i], got[i], "element %d points into the caller's slice", i)
	}
	pods[1].Name = "renamed"
	assert.Equal(t, "renamed", got[1].Name, "no copy: a change to the list is seen")
}

// indexes maps each pod of out to its index in in (by identity).
func indexes(in, out []*corev1.Pod) []int {
	at := make(map[*corev1.Pod]int, len(in))
	for i, p := range in {
		at[p] = i
	}
	idx := make([]int, len(out))
	for i, p := range out {
		idx[i] = at[p]
	}
	return idx
}

// TestPropertyPointers: ranking a list through Pointers picks the same
// positions as ranking pointers to copies of the same pods, and leaves the
// list as it was.
func TestPropertyPointers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ptrs := rapid.SliceOfN(podGen(), 0, 30).Draw(t, "pods")
		vals := make([]corev1.Pod, len(ptrs))
		for i, p := range ptrs {
			vals[i] = *p.DeepCopy()
		}
		before := make([]corev1.Pod, len(vals))
		for i := range vals {
			before[i] = *vals[i].DeepCopy()
		}
		n := rapid.IntRange(0, len(vals)+1).Draw(t, "n")
		opts := optsGen().Draw(t, "opts")

		got := podrank.Pointers(vals)
		require.Len(t, got, len(vals))
		for i := range vals {
			require.Same(t, &vals[i], got[i])
		}
		want := indexes(ptrs, podrank.ForDeletion(ptrs, ptrs, n, opts))
		assert.Equal(t, want, indexes(got, podrank.ForDeletion(got, got, n, opts)), "same victims by position")
		assert.Equal(t, before, vals, "the list is not modified")
	})
}

// BenchmarkPointers compares the conversion of a listed []corev1.Pod with
// the ranking it feeds: Pointers alone, and Pointers then ForDeletion of a
// tenth of the pods (the related pods are the list itself).
func BenchmarkPointers(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		ptrs, _ := genPods(n)
		vals := make([]corev1.Pod, n)
		for i, p := range ptrs {
			vals[i] = *p
		}
		b.Run("n="+strconv.Itoa(n)+"/Pointers", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchSink = podrank.Pointers(vals)
			}
		})
		b.Run("n="+strconv.Itoa(n)+"/ForDeletion", func(b *testing.B) {
			b.ReportAllocs()
			opts := podrank.Options{Now: benchNow}
			for b.Loop() {
				benchSink = podrank.ForDeletion(ptrs, ptrs, n/10, opts)
			}
		})
		b.Run("n="+strconv.Itoa(n)+"/Pointers+ForDeletion", func(b *testing.B) {
			b.ReportAllocs()
			opts := podrank.Options{Now: benchNow}
			for b.Loop() {
				pods := podrank.Pointers(vals)
				benchSink = podrank.ForDeletion(pods, pods, n/10, opts)
			}
		})
	}
}
