package clientgo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

func ctrlRef(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

// fleetPods are pods of every relation to the ReplicaSet default/web
// (uid-web): its own, another owner's, a same-named owner's of another UID
// or kind, orphans, released pods (no controller left, like orphans) and
// pods of another namespace.
func fleetPods() []*corev1.Pod {
	pod := func(namespace, name string, refs []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("pod-" + name), OwnerReferences: refs}}
	}
	released := pod(ns, "released", ctrlRef("ReplicaSet", "web", "uid-web"))
	released.OwnerReferences[0].Controller = nil // an ownerRef that no longer controls
	return []*corev1.Pod{
		pod(ns, "owned", ctrlRef("ReplicaSet", "web", "uid-web")),
		pod(ns, "other-owner", ctrlRef("ReplicaSet", "db", "uid-db")),
		pod(ns, "same-name-other-uid", ctrlRef("ReplicaSet", "web", "uid-old")),
		pod(ns, "same-name-other-kind", ctrlRef("PodSet", "web", "uid-ps")),
		pod(ns, "orphan", nil),
		released,
		pod("elsewhere", "owned-elsewhere", ctrlRef("ReplicaSet", "web", "uid-web")),
		pod("elsewhere", "orphan-elsewhere", nil),
	}
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// with the index, ListByController reads the owner's pods and the
// namespace's orphans by key; without it, the namespace listed and
// filtered gives the same pods.
func TestPodsListByController(t *testing.T) {
	want := []string{"owned", "orphan", "released"}
	for _, tc := range []struct {
		name    string
		indexed bool
	}{{name: "indexed", indexed: true}, {name: "fallback"}} {
		t.Run(tc.name, func(t *testing.T) {
			inf := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Pods().Informer()
			if tc.indexed {
				require.NoError(t, clientgo.AddPodControllerIndexer(inf))
			}
			for _, p := range fleetPods() {
				require.NoError(t, inf.GetIndexer().Add(p))
			}
			got, err := clientgo.Pods{Indexer: inf.GetIndexer()}.ListByController(ns, "ReplicaSet", "web", "uid-web")
			require.NoError(t, err)
			assert.ElementsMatch(t, want, podNames(got))
		})
	}
}

// an index already registered under the name is kept (upstream's
// AddPodControllerIndexer does the same), and adding twice is no error.
func TestAddIndexersKeepExistingIndexes(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	pods, rss := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	calls := 0
	require.NoError(t, pods.AddIndexers(cache.Indexers{clientgo.PodControllerIndex: func(any) ([]string, error) {
		calls++
		return nil, nil
	}}))
	require.NoError(t, clientgo.AddPodControllerIndexer(pods))
	require.NoError(t, clientgo.AddPodControllerIndexer(pods))
	require.NoError(t, clientgo.AddControllerUIDIndexer(rss))
	require.NoError(t, clientgo.AddControllerUIDIndexer(rss))
	require.NoError(t, pods.GetIndexer().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}))
	assert.Equal(t, 1, calls, "the existing index function is the one used")
}

// related owners by controller UID, with and without the
// index, are the same.
func TestOwnersListByController(t *testing.T) {
	mk := func(namespace, name string, refs []metav1.OwnerReference) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name), OwnerReferences: refs}}
	}
	rss := []*appsv1.ReplicaSet{
		mk(ns, "web", ctrlRef("Deployment", "d", "uid-d")),
		mk(ns, "sibling", ctrlRef("Deployment", "d", "uid-d")),
		mk(ns, "stranger", ctrlRef("Deployment", "e", "uid-e")),
		mk(ns, "bare", nil),
		mk("elsewhere", "far", ctrlRef("Deployment", "d", "uid-d")),
	}
	for _, indexed := range []bool{true, false} {
		cs := fake.NewClientset()
		inf := informers.NewSharedInformerFactory(cs, 0).Apps().V1().ReplicaSets().Informer()
		if indexed {
			require.NoError(t, clientgo.AddControllerUIDIndexer(inf))
		}
		for _, rs := range rss {
			require.NoError(t, inf.GetIndexer().Add(rs))
		}
		got, err := clientgo.ReplicaSetOwners(cs, inf).ListByController(ns, "uid-d")
		require.NoError(t, err)
		var names []string
		for _, rs := range got {
			names = append(names, rs.Name)
		}
		assert.ElementsMatch(t, []string{"web", "sibling"}, names, "indexed=%v", indexed)
	}
}

// Register adds both indexes to index informers.
func TestRegisterAddsTheIndexes(t *testing.T) {
	cs := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(cs, 0)
	c, err := reconcile.NewController(clientgo.ReplicaSets(cs, factory, nil))
	require.NoError(t, err)
	pods, rss := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer q.ShutDown()
	require.NoError(t, clientgo.Register(c, pods, rss, q))
	assert.Contains(t, pods.GetIndexer().GetIndexers(), clientgo.PodControllerIndex)
	assert.Contains(t, rss.GetIndexer().GetIndexers(), clientgo.ControllerUIDIndex)
}
