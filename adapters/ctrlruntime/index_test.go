package ctrlruntime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
)

func ctrlRef(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

// relatedPods are pods of every relation to the ReplicaSet default/web
// (uid-web): its own, another owner's, a same-named owner's of another UID
// or kind, an orphan, a released pod (its ownerRef no longer controls) and
// pods of another namespace.
func relatedPods() []*corev1.Pod {
	mk := func(namespace, name string, refs []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("pod-" + name), OwnerReferences: refs}}
	}
	released := mk(ns, "released", ctrlRef("ReplicaSet", "web", "uid-web"))
	released.OwnerReferences[0].Controller = nil
	return []*corev1.Pod{
		mk(ns, "owned", ctrlRef("ReplicaSet", "web", "uid-web")),
		mk(ns, "other-owner", ctrlRef("ReplicaSet", "db", "uid-db")),
		mk(ns, "same-name-other-uid", ctrlRef("ReplicaSet", "web", "uid-old")),
		mk(ns, "same-name-other-kind", ctrlRef("PodSet", "web", "uid-ps")),
		mk(ns, "orphan", nil),
		released,
		mk("elsewhere", "owned-elsewhere", ctrlRef("ReplicaSet", "web", "uid-web")),
		mk("elsewhere", "orphan-elsewhere", nil),
	}
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// through the fake client's field index and without it (the
// fallback lists the namespace and filters), the same pods; every lookup
// asks for no deep copy.
func TestPodsListByController(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		b := fake.NewClientBuilder().WithScheme(scheme(t))
		for _, p := range relatedPods() {
			b = b.WithObjects(p)
		}
		if indexed {
			b = b.WithIndex(&corev1.Pod{}, ctrlruntime.PodControllerField, ctrlruntime.PodControllerValue)
		}
		var mu sync.Mutex
		var lists, deepCopies int
		b = b.WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			var lo client.ListOptions
			lo.ApplyOptions(opts)
			mu.Lock()
			lists++
			if lo.UnsafeDisableDeepCopy == nil || !*lo.UnsafeDisableDeepCopy {
				deepCopies++
			}
			mu.Unlock()
			return c.List(ctx, list, opts...)
		}})
		got, err := ctrlruntime.Pods{Reader: b.Build()}.ListByController(ns, "ReplicaSet", "web", "uid-web")
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"owned", "orphan", "released"}, podNames(got), "indexed=%v", indexed)
		assert.Zero(t, deepCopies, "indexed=%v", indexed)
		if indexed {
			assert.Equal(t, 2, lists, "two index lookups")
		}
	}
}

// A list error that is not about the index is returned, not hidden by the
// fallback.
func TestPodsListByControllerError(t *testing.T) {
	boom := errors.New("boom")
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return boom },
	}).Build()
	_, err := ctrlruntime.Pods{Reader: c}.ListByController(ns, "ReplicaSet", "web", "uid-web")
	assert.ErrorIs(t, err, boom)
}

// related owners by controller UID, with and without the
// fake client's field index.
func TestOwnersListByController(t *testing.T) {
	mk := func(namespace, name string, refs []metav1.OwnerReference) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name), OwnerReferences: refs}}
	}
	for _, indexed := range []bool{true, false} {
		b := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(
			mk(ns, "web", ctrlRef("Deployment", "d", "uid-d")),
			mk(ns, "sibling", ctrlRef("Deployment", "d", "uid-d")),
			mk(ns, "stranger", ctrlRef("Deployment", "e", "uid-e")),
			mk(ns, "bare", nil),
			mk("elsewhere", "far", ctrlRef("Deployment", "d", "uid-d")),
		)
		if indexed {
			b = b.WithIndex(&appsv1.ReplicaSet{}, ctrlruntime.ControllerUIDField, ctrlruntime.ControllerUIDValue)
		}
		c := b.Build()
		owners, err := ctrlruntime.NewOwners[*appsv1.ReplicaSet](c, c, scheme(t))
		require.NoError(t, err)
		got, err := owners.ListByController(ns, "uid-d")
		require.NoError(t, err)
		var names []string
		for _, rs := range got {
			names = append(names, rs.Name)
		}
		assert.ElementsMatch(t, []string{"web", "sibling"}, names, "indexed=%v", indexed)
	}
}

// AddIndexes registers both field indexes on controller-runtime's
// default cache, with the values controller-runtime looks up for a
// namespaced list, and a second call keeps them.
func TestAddIndexes(t *testing.T) {
	c := newCache(t, cache.Options{})
	require.NoError(t, ctrlruntime.AddIndexes[*appsv1.ReplicaSet](t.Context(), c))
	require.NoError(t, ctrlruntime.AddIndexes[*appsv1.ReplicaSet](t.Context(), c), "an existing index is kept")
	inf, err := c.GetInformer(t.Context(), &corev1.Pod{})
	require.NoError(t, err)
	indexer := inf.(toolscache.SharedIndexInformer).GetIndexer()
	for _, p := range relatedPods() {
		require.NoError(t, indexer.Add(p))
	}
	var got []string
	for _, key := range []string{ns + "/" + ns + "/ReplicaSet/web/uid-web", ns + "/" + ns} {
		objs, err := indexer.ByIndex("field:"+ctrlruntime.PodControllerField, key)
		require.NoError(t, err)
		for _, o := range objs {
			got = append(got, o.(*corev1.Pod).Name)
		}
	}
	assert.ElementsMatch(t, []string{"owned", "orphan", "released"}, got)
	rsInf, err := c.GetInformer(t.Context(), &appsv1.ReplicaSet{})
	require.NoError(t, err)
	assert.Contains(t, rsInf.(toolscache.SharedIndexInformer).GetIndexer().GetIndexers(), "field:"+ctrlruntime.ControllerUIDField)
	assert.ErrorContains(t, ctrlruntime.AddIndexes[*appsv1.ReplicaSet](t.Context(), nil), "nil cache")
}
