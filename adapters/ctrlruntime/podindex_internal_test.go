package ctrlruntime

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// offlineCache is a controller-runtime cache that is never started: its
// informers exist and their stores can be filled by hand.
func offlineCache(t *testing.T) cache.Cache {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	c, err := cache.New(&rest.Config{Host: "https://127.0.0.1:6443"}, cache.Options{Scheme: clientgoscheme.Scheme, Mapper: mapper})
	require.NoError(t, err)
	return c
}

// storeOf returns the pod informer's store of c.
func storeOf(t *testing.T, c cache.Cache) toolscache.Indexer {
	t.Helper()
	inf, err := c.GetInformer(t.Context(), &corev1.Pod{}, cache.BlockUntilSynced(false))
	require.NoError(t, err)
	ix, ok := indexerOf(inf)
	require.True(t, ok, "a client-go informer")
	return ix
}

func indexPods() []*corev1.Pod {
	ref := func(kind, name, uid string) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}}
	}
	mk := func(namespace, name string, refs []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("pod-" + name), OwnerReferences: refs}}
	}
	released := mk("default", "released", ref("ReplicaSet", "web", "uid-web"))
	released.OwnerReferences[0].Controller = nil
	return []*corev1.Pod{
		mk("default", "owned", ref("ReplicaSet", "web", "uid-web")),
		mk("default", "owned-2", ref("ReplicaSet", "web", "uid-web")),
		mk("default", "other-owner", ref("ReplicaSet", "db", "uid-db")),
		mk("default", "same-name-other-uid", ref("ReplicaSet", "web", "uid-old")),
		mk("default", "same-name-other-kind", ref("PodSet", "web", "uid-ps")),
		mk("default", "orphan", nil),
		released,
		mk("elsewhere", "owned-elsewhere", ref("ReplicaSet", "web", "uid-web")),
		mk("elsewhere", "orphan-elsewhere", nil),
	}
}

// the Pods NewConfig builds reads the cache's pod index directly
// once AddIndexes registered it, and answers as the lookup through the
// reader does, with the cache's own pods (no copy). Before the index
// exists it lists through the reader.
func TestPodsReadTheIndexDirectly(t *testing.T) {
	c := offlineCache(t)
	store := storeOf(t, c)
	var objs []client.Object
	for _, p := range indexPods() {
		require.NoError(t, store.Add(p))
		objs = append(objs, p)
	}
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, PodControllerField, PodControllerValue).Build()
	pods := Pods{Reader: reader, index: &podIndex{informers: c}}

	_, ok := pods.index.byKeys("default", []string{"default"})
	assert.False(t, ok, "no index registered yet")
	viaReader, err := pods.ListByController("default", "ReplicaSet", "web", "uid-web")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"owned", "owned-2", "orphan", "released"}, names(viaReader))

	require.NoError(t, AddIndexes[*appsv1.ReplicaSet](t.Context(), c))
	for _, owner := range []struct{ kind, name, uid string }{
		{"ReplicaSet", "web", "uid-web"}, {"ReplicaSet", "db", "uid-db"}, {"PodSet", "web", "uid-ps"}, {"ReplicaSet", "gone", "uid-gone"},
	} {
		for _, namespace := range []string{"default", "elsewhere", "empty"} {
			got, err := pods.ListByController(namespace, owner.kind, owner.name, types.UID(owner.uid))
			require.NoError(t, err)
			var want []string
			for _, p := range indexPods() {
				if podops.ControlledByOrOrphan(p, namespace, owner.kind, owner.name, types.UID(owner.uid)) {
					want = append(want, p.Name)
				}
			}
			assert.ElementsMatch(t, want, names(got), "%s %s/%s", owner.kind, namespace, owner.name)
			for _, p := range got {
				cached, exists, err := store.Get(p)
				require.NoError(t, err)
				require.True(t, exists)
				assert.Same(t, cached, p, "the cache's own pod")
			}
		}
	}
	assert.NotNil(t, pods.index.found.Load(), "the index is kept once found")
}

// A cache whose informers have no client-go indexer, and a pod index laid
// out otherwise than controller-runtime's, leave the lookup to the reader.
func TestPodIndexNotUsable(t *testing.T) {
	x := &podIndex{informers: noIndexer{}}
	_, ok := x.byKeys("default", []string{"default"})
	assert.False(t, ok)
	_, ok = (*podIndex)(nil).byKeys("default", nil)
	assert.False(t, ok)
	_, ok = (&podIndex{}).byKeys("default", nil)
	assert.False(t, ok)

	assert.False(t, keysLaidOut(nil))
	assert.False(t, keysLaidOut(func(any) ([]string, error) { return []string{"probe"}, nil }), "not namespaced")
	assert.False(t, keysLaidOut(func(any) ([]string, error) { return nil, errors.New("boom") }))
	assert.True(t, keysLaidOut(func(any) ([]string, error) { return []string{"__all_namespaces/probe", "probe/probe"}, nil }))
}

// noIndexer is a cache.Informers whose informers are not client-go's.
type noIndexer struct{ cache.Informers }

func (noIndexer) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return struct{ cache.Informer }{}, nil
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
