package ctrlruntime

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// PodControllerField is the pod field index by controller reference that
// [Pods] reads: a pod's value is "namespace/kind/name/uid" of its
// controller ownerRef, or its namespace when it has none (upstream's
// PodControllerIndexKey). [AddIndexes] registers it.
const PodControllerField = "reconcilekit.dev/podController"

// ControllerUIDField is the owner field index by the UID of the owner's
// controller ownerRef that [Owners] reads (upstream's controllerUID index of
// ReplicaSets). An owner without a controller has no value. [AddIndexes]
// registers it.
const ControllerUIDField = "reconcilekit.dev/controllerUID"

// AddIndexes registers [PodControllerField] on pods and
// [ControllerUIDField] on owners of type T in c (in a manager:
// mgr.GetCache(), before mgr.Start), so that [Pods] and [Owners] over the
// manager's client read only what a sync needs: the owner's pods and the
// namespace's orphans, the owners with the same controller. An index
// already registered under the name is kept, as upstream's
// AddPodControllerIndexer does (it must have the same values), when the
// cache hands out client-go SharedIndexInformers (the default cache does);
// otherwise a second registration is controller-runtime's conflict error.
// [Register] calls it. Like every field index, it creates the two
// informers (asking the API server's discovery for the kinds) without
// starting them.
func AddIndexes[T reconcile.Object](ctx context.Context, c cache.Cache) error {
	if c == nil {
		return fmt.Errorf("ctrlruntime: AddIndexes: nil cache")
	}
	owner, err := newOf[T]()
	if err != nil {
		return err
	}
	if err := addIndex(ctx, c, &corev1.Pod{}, PodControllerField, PodControllerValue); err != nil {
		return err
	}
	return addIndex(ctx, c, owner, ControllerUIDField, ControllerUIDValue)
}

// PodControllerValue is the [PodControllerField] index function: the one
// value of a pod (see PodControllerField), none for another object. With
// controller-runtime's fake client, register it (WithIndex) to exercise
// the index, as the example does.
func PodControllerValue(obj client.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return podops.PodControllerKeys(pod)
}

// ControllerUIDValue is the [ControllerUIDField] index function: the UID
// of obj's controller ownerRef, or none.
func ControllerUIDValue(obj client.Object) []string {
	return podops.ControllerUIDKeys(obj)
}

// addIndex registers field on obj's informer unless it is there already.
func addIndex(ctx context.Context, c cache.Cache, obj client.Object, field string, fn client.IndexerFunc) error {
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("ctrlruntime: AddIndexes: the informer of %T: %w", obj, err)
	}
	if ix, ok := indexerOf(inf); ok {
		if _, exists := ix.GetIndexers()[fieldIndexName(field)]; exists {
			return nil
		}
	}
	if err := c.IndexField(ctx, obj, field, fn); err != nil {
		return fmt.Errorf("ctrlruntime: AddIndexes: indexing %T by %s: %w", obj, field, err)
	}
	return nil
}

// indexerOf returns the client-go store behind inf: a manager's cache over
// all namespaces (or one) hands out client-go informers; a multi-namespace
// cache does not, and ok is false.
func indexerOf(inf cache.Informer) (toolscache.Indexer, bool) {
	withIndexer, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, false
	}
	return withIndexer.GetIndexer(), true
}

// fieldIndexName is the name controller-runtime gives, in the informer's
// store, to the index it registers for field.
func fieldIndexName(field string) string {
	return "field:" + field
}

// missingIndex reports whether err is a reader's answer to a list by
// field when it has no index for field, which the lookups take as "list
// everything and filter". controller-runtime gives that answer no type and
// no sentinel, so this is the one place that reads its text, and reads it
// exactly: the cache's (client-go's indexer, or controller-runtime's own
// check) "index with name field:F does not exist", the fake client's "no
// index with name F has been registered". Any other error, one naming the
// field included, is not a missing index and is returned to the caller.
// TestMissingIndexWording lists each of controller-runtime's readers and
// fails when a release changes a wording, at both ends of the supported
// range (`make unit` and `make compat`).
func missingIndex(err error, field string) bool {
	if err == nil {
		return false
	}
	text := strings.ToLower(err.Error())
	field = strings.ToLower(field)
	cached := "index with name " + fieldIndexName(field) + " does not exist"
	fake := "no index with name " + field + " has been registered"
	return strings.Contains(text, cached) || strings.Contains(text, fake)
}
