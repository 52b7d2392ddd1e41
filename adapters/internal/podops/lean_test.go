package podops_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func TestLeanPods(t *testing.T) {
	pod := realisticPod()
	want := pod.DeepCopy()
	got, err := podops.LeanPods(pod)
	require.NoError(t, err)
	assert.Equal(t, want, pod, "the pod given is not modified")
	assert.Equal(t, reconcile.LeanPod(want), got)
	again, err := podops.LeanPods(got)
	require.NoError(t, err)
	assert.Equal(t, got, again, "idempotent")
	// The lean pod is a small fraction of the pod, even trimmed of its
	// managedFields (BenchmarkLeanPods measures it).
	trimmed := want.DeepCopy()
	trimmed.ManagedFields = nil
	assert.Less(t, got.(*corev1.Pod).Size()*3, trimmed.Size())

	other := &corev1.ConfigMap{}
	other.ManagedFields = pod.ManagedFields
	got, err = podops.LeanPods(other)
	require.NoError(t, err)
	assert.Same(t, other, got)
	assert.Nil(t, other.ManagedFields, "other objects lose their managedFields only")

	tomb := cache.DeletedFinalStateUnknown{Key: "default/x", Obj: realisticPod()}
	got, err = podops.LeanPods(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, got, "what is not an object is returned unchanged")
	got, err = podops.LeanPods((*corev1.Pod)(nil))
	require.NoError(t, err)
	assert.Nil(t, got.(*corev1.Pod))
}

// BenchmarkLeanPods measures the transform on a realistic pod (as a v1.37
// API server returns it after a kubelet ran it) and reports the bytes a
// cache holds per pod: as protobuf (full-B with managedFields, trimmed-B
// without them as TrimManagedFields leaves it, lean-B after LeanPods) and
// as Go heap, measured by decoding 2,000 pods from protobuf, applying the
// transform and reading the live heap after a GC (heap-full-B,
// heap-trimmed-B, heap-lean-B per pod). docs/fleet.md records the figures.
func BenchmarkLeanPods(b *testing.B) {
	pod := realisticPod()
	full := pod.Size()
	trimmed := pod.DeepCopy()
	trimmed.ManagedFields = nil
	lean := reconcile.LeanPod(pod)
	raw, err := pod.Marshal()
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := podops.LeanPods(pod); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(full), "full-B")
	b.ReportMetric(float64(trimmed.Size()), "trimmed-B")
	b.ReportMetric(float64(lean.Size()), "lean-B")
	b.ReportMetric(heapPerPod(b, raw, func(any) (any, error) { return nil, nil }, true), "heap-full-B")
	b.ReportMetric(heapPerPod(b, raw, podops.TrimManagedFields, false), "heap-trimmed-B")
	b.ReportMetric(heapPerPod(b, raw, podops.LeanPods, false), "heap-lean-B")
}

// heapPerPod decodes n copies of the protobuf pod raw, keeps each as
// transform returns it (or as decoded, with keepDecoded), and returns the
// growth of the live heap per pod.
func heapPerPod(b *testing.B, raw []byte, transform func(any) (any, error), keepDecoded bool) float64 {
	b.Helper()
	const n = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]any, n)
	for i := range kept {
		p := &corev1.Pod{}
		if err := p.Unmarshal(raw); err != nil {
			b.Fatal(err)
		}
		obj, err := transform(p)
		if err != nil {
			b.Fatal(err)
		}
		if keepDecoded {
			obj = p
		}
		kept[i] = obj
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / n
}
