package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// BatchReporter is an optional interface of a [PodControl]: a PodControl
// that implements it hears, once per slow-start batch, which pods the
// batch created, e.g. to record one event per batch instead of one per pod
// (the adapters' PodControl does, opted in, beyond upstream).
//
// ManageReplicas calls CreatedBatch after every create of its call has
// returned and before its Hooks, once per batch that created at least one
// pod, in batch order, with that batch's created pods (as CreatePod
// returned them) in call order. Failed, fenced and skipped creates are not
// in it, nor a retried name that met AlreadyExists. It runs in the caller's
// goroutine; calls for different owners may run concurrently. The slice is
// the Reporter's to keep; the pods must not be modified.
type BatchReporter interface {
	CreatedBatch(ctx context.Context, created []*corev1.Pod)
}

// reportBatches calls r once per batch of results that created a pod.
// batches are the sizes of the batches that ran, over consecutive indices.
func reportBatches(ctx context.Context, r BatchReporter, results []createResult, batches []int) {
	start := 0
	for _, size := range batches {
		var created []*corev1.Pod
		for i := start; i < start+size && i < len(results); i++ {
			if results[i].state == createdOK && results[i].pod != nil {
				created = append(created, results[i].pod)
			}
		}
		if len(created) > 0 {
			r.CreatedBatch(ctx, created)
		}
		start += size
	}
}
