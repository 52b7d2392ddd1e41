package reconcile_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// batchPods is a recPods that also hears the batches (reconcile.BatchReporter).
type batchPods struct {
	*recPods
	mu      sync.Mutex
	batches [][]string // names of each reported batch
}

var _ reconcile.BatchReporter = (*batchPods)(nil)

func (b *batchPods) CreatedBatch(_ context.Context, created []*corev1.Pod) {
	names := make([]string, len(created))
	for i, p := range created {
		names[i] = p.Name
	}
	b.mu.Lock()
	b.batches = append(b.batches, names)
	b.mu.Unlock()
}

func TestBatchReporter(t *testing.T) {
	cases := []struct {
		name      string
		want      int32
		createErr func(context.Context, *corev1.Pod, int) error
		batches   [][]int // how many pods each reported batch holds
	}{
		{"one report per slow-start batch", 10, nil, [][]int{{1}, {2}, {4}, {3}}},
		{"a failing batch reports what it created, and ends the run (R-9.2)", 10,
			func(_ context.Context, _ *corev1.Pod, call int) error {
				if call == 4 {
					return errRecQuota
				}
				return nil
			}, [][]int{{1}, {2}, {3}}},
		{"a batch that created nothing is not reported", 3,
			func(context.Context, *corev1.Pod, int) error { return errRecQuota }, nil},
		{"NamespaceTerminating creates nothing: no report", 3,
			func(context.Context, *corev1.Pod, int) error { return recNamespaceTerminating() }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := recRS(c.want)
			pods := &batchPods{recPods: &recPods{CreateErr: c.createErr}}
			m := &reconcile.Manager{Pods: pods}
			_, _ = m.ManageReplicas(t.Context(), reconcile.ReplicaSetOwner(rs), nil, nil)
			var sizes [][]int
			for _, b := range pods.batches {
				sizes = append(sizes, []int{len(b)})
			}
			assert.Equal(t, c.batches, sizes)
			seen := map[string]bool{}
			for _, b := range pods.batches {
				for _, name := range b {
					require.False(t, seen[name], "pod %s reported twice", name)
					seen[name] = true
				}
			}
		})
	}
}
