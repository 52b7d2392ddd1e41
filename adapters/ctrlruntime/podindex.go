package ctrlruntime

import (
	"context"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// podIndex reads the pod informer's [PodControllerField] index directly,
// for [Pods.ListByController]. controller-runtime's cache reader copies
// every pod it lists into a new PodList (a corev1.Pod, over a kilobyte, per
// pod per sync even with UnsafeDisableDeepCopy); for an owner of 10,000 pods
// that was 92% of a PodSet controller's allocations (docs/compare.md). The
// index holds the same pods, so reading it gives the same answer without
// the copies.
//
// The index is found on first use and kept: [AddIndexes] registers it after
// NewConfig. Until it is found, or when the informers are not a single
// client-go informer per type (a multi-namespace cache), or when the index's
// keys are not laid out as this controller-runtime version's are, lookups
// return ok false and the caller lists through the reader. Safe for
// concurrent use.
type podIndex struct {
	informers cache.Informers
	found     atomic.Pointer[toolscache.Indexer]
}

// DirectIndex reports whether [Pods.ListByController] reads the pod
// informer's [PodControllerField] index directly (the fast path: no copy of
// every pod listed) rather than listing through Reader. It is true for the
// Pods [NewConfig] builds on controller-runtime's default cache once
// [AddIndexes] (or [Register]) has registered the index, and false for a
// Pods built by hand, on a cache restricted to namespaces, before the
// index exists, or on a controller-runtime release whose index name or
// key layout this adapter does not know (the reads are then right but
// slower). It looks for the index when not found yet; package telemetry
// exports it as reconcilekit_fast_path{path="pod_index"}. Safe for
// concurrent use.
func (p Pods) DirectIndex() bool {
	return p.index.indexer() != nil
}

// byKeys returns the pods indexed under each of keys in namespace, and
// whether the index could be read.
func (x *podIndex) byKeys(namespace string, keys []string) ([]*corev1.Pod, bool) {
	ix := x.indexer()
	if ix == nil {
		return nil, false
	}
	var out []*corev1.Pod
	for _, key := range keys {
		items, err := ix.ByIndex(fieldIndexName(PodControllerField), namespacedKey(namespace, key))
		if err != nil {
			return nil, false
		}
		out = slices.Grow(out, len(items))
		for _, it := range items {
			if pod, ok := it.(*corev1.Pod); ok {
				out = append(out, pod)
			}
		}
	}
	return out, true
}

// indexer returns the pod informer's indexer once it has the index, else
// nil.
func (x *podIndex) indexer() toolscache.Indexer {
	if x == nil || x.informers == nil {
		return nil
	}
	if ix := x.found.Load(); ix != nil {
		return *ix
	}
	inf, err := x.informers.GetInformer(context.Background(), &corev1.Pod{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil
	}
	ix, ok := indexerOf(inf)
	if !ok || !keysLaidOut(ix.GetIndexers()[fieldIndexName(PodControllerField)]) {
		return nil
	}
	x.found.Store(&ix)
	return ix
}

// keysLaidOut reports whether fn, the index function controller-runtime
// registered for PodControllerField, files a pod under
// namespacedKey(namespace, value), by asking it about an orphan, whose value
// is its namespace.
func keysLaidOut(fn toolscache.IndexFunc) bool {
	if fn == nil {
		return false
	}
	const ns = "probe"
	keys, err := fn(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}})
	return err == nil && slices.Contains(keys, namespacedKey(ns, ns))
}

// namespacedKey is how controller-runtime keys a field index within a
// namespace.
func namespacedKey(namespace, value string) string {
	return namespace + "/" + value
}
