package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// recorder records handler calls as "add a", "update a 3->4", "delete a".
type recorder struct{ calls []string }

func (r *recorder) handler() cluster.Handler {
	return cluster.Handler{
		OnAdd: func(p *corev1.Pod) { r.calls = append(r.calls, "add "+p.Name) },
		OnUpdate: func(o, c *corev1.Pod) {
			r.calls = append(r.calls, "update "+c.Name+" "+o.ResourceVersion+"->"+c.ResourceVersion)
		},
		OnDelete: func(p *corev1.Pod) { r.calls = append(r.calls, "delete "+p.Name) },
	}
}

func TestInformerLagAndOrder(t *testing.T) {
	c := cluster.New(cluster.Options{})
	var r recorder
	c.Informer.Handler = r.handler()
	start := c.Informer.LastSyncResourceVersion()

	_, err := c.API.Create(named("a")) // rv 2 at t0
	require.NoError(t, err)
	c.Clock.Step(time.Minute)
	_, err = c.API.Create(named("b")) // rv 3 at t0+1m
	require.NoError(t, err)

	assert.Zero(t, c.Informer.DeliverOlderThan(2*time.Minute), "nothing is two minutes old")
	assert.Equal(t, start, c.Informer.LastSyncResourceVersion())
	assert.False(t, c.Informer.DeliverOne(90*time.Second))
	assert.True(t, c.Informer.DeliverOne(time.Minute))
	assert.Equal(t, "2", c.Informer.LastSyncResourceVersion())
	_, cached := c.Informer.Get("ns/b")
	assert.False(t, cached)
	assert.Equal(t, 1, c.Informer.DeliverAll())
	assert.Equal(t, "3", c.Informer.LastSyncResourceVersion())
	assert.Equal(t, []string{"add a", "add b"}, r.calls)
	assert.Len(t, c.Informer.Pods(), 2)
}

func TestInformerDuplicates(t *testing.T) {
	for _, raw := range []bool{false, true} {
		c := cluster.New(cluster.Options{})
		var r recorder
		c.Informer.Handler, c.Informer.Raw = r.handler(), raw
		_, err := c.API.Create(named("a"))
		require.NoError(t, err)
		require.NoError(t, c.API.Delete("ns", "a"))
		require.True(t, c.Informer.Duplicate(0))
		require.True(t, c.Informer.Duplicate(2))
		assert.False(t, c.Informer.Duplicate(4))
		assert.Equal(t, 4, c.Informer.DeliverAll())
		if raw {
			assert.Equal(t, []string{"add a", "add a", "delete a", "delete a"}, r.calls, "raw: at-least-once")
		} else {
			assert.Equal(t, []string{"add a", "update a 2->2", "delete a", "delete a"}, r.calls,
				"client-go: a duplicate of a cached object is an update with the same resourceVersion")
		}
		assert.Equal(t, 2, c.Informer.Stats().Duplicated)
	}
}

func TestInformerDropRelistBookmark(t *testing.T) {
	c := cluster.New(cluster.Options{})
	var r recorder
	c.Informer.Handler = r.handler()
	c.Informer.DropIf = func(e cluster.Event) bool { return e.Pod.Name == "dropped" }
	_, err := c.API.Create(named("dropped"))
	require.NoError(t, err)
	_, err = c.API.Create(named("kept"))
	require.NoError(t, err)
	_, err = c.API.Create(named("late"))
	require.NoError(t, err)
	require.True(t, c.Informer.Drop(1), "drop the event of late")

	assert.Equal(t, 1, c.Informer.DeliverAll())
	_, ok := c.Informer.Get("ns/dropped")
	assert.False(t, ok, "the cache never saw it")
	assert.Equal(t, 2, c.Informer.Stats().Dropped)

	assert.True(t, c.Informer.Bookmark(), "nothing is queued, so the cache caught up")
	assert.Equal(t, c.API.ResourceVersion(), c.Informer.LastSyncResourceVersion())

	assert.Equal(t, 2, c.Informer.Relist())
	assert.ElementsMatch(t, []string{"add kept", "add dropped", "add late"}, r.calls)
	assert.Len(t, c.Informer.Pods(), 3)

	require.NoError(t, c.API.Delete("ns", "kept"))
	c.Informer.DropIf = nil
	_, err = c.API.Create(named("new"))
	require.NoError(t, err)
	c.Informer.DropIf = func(cluster.Event) bool { return true }
	assert.Equal(t, 2, c.Informer.Relist(), "a delete and an add")
	assert.Zero(t, c.Informer.Len(), "the queued events are covered by the list")
	assert.Contains(t, r.calls, "delete kept")
	assert.Contains(t, r.calls, "add new")
}

// The index by controller reference follows the cache through adds,
// updates that change the controller (adoption, release), deletes and a
// relist: an owner's key finds its pods, the namespace's key its orphans.
func TestInformerByController(t *testing.T) {
	c := cluster.New(cluster.Options{})
	yes := true
	owned := func(p *corev1.Pod) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: &yes}}
		return p
	}
	names := func() []string {
		var out []string
		for _, p := range c.Informer.ByController("ns", "ReplicaSet", "web", "uid-web") {
			out = append(out, p.Name)
		}
		return out
	}
	for _, p := range []*corev1.Pod{owned(named("a")), named("b"), named("c")} {
		_, err := c.API.Create(p)
		require.NoError(t, err)
	}
	other := owned(named("d"))
	other.OwnerReferences[0].UID = "uid-old"
	_, err := c.API.Create(other)
	require.NoError(t, err)
	c.Informer.DeliverAll()
	assert.Equal(t, []string{"a", "b", "c"}, names(), "owned first, then the orphans; not d")

	a, _ := c.API.Get("ns", "a")
	a.OwnerReferences = nil // released
	_, err = c.API.Update(a)
	require.NoError(t, err)
	b, _ := c.API.Get("ns", "b")
	_, err = c.API.Update(owned(b)) // adopted
	require.NoError(t, err)
	require.NoError(t, c.API.Delete("ns", "c"))
	c.Informer.DeliverAll()
	assert.Equal(t, []string{"b", "a"}, names())

	_, err = c.API.Create(named("e"))
	require.NoError(t, err)
	c.Informer.Relist()
	assert.Equal(t, []string{"b", "a", "e"}, names())
	assert.Empty(t, c.Informer.ByController("elsewhere", "ReplicaSet", "web", "uid-web"))
}

// An informer that has not listed sees nothing: not the pods the API held
// before it started, not the writes since. Its initial list brings them
// all at once, each as an add, and covers the queued events.
func TestInformerInitialList(t *testing.T) {
	c := cluster.New(cluster.Options{Unsynced: true})
	var r recorder
	c.Informer.Handler = r.handler()
	_, err := c.API.Create(named("a"))
	require.NoError(t, err)
	_, err = c.API.Create(named("b"))
	require.NoError(t, err)

	assert.False(t, c.Informer.HasSynced())
	assert.Empty(t, c.Informer.LastSyncResourceVersion(), "no list, no version")
	assert.Zero(t, c.Informer.DeliverAll(), "no watch before the list")
	assert.False(t, c.Informer.Bookmark())
	assert.Empty(t, c.Informer.Pods())
	assert.Equal(t, 2, c.Informer.Len(), "the events are queued meanwhile")

	assert.Equal(t, 2, c.Informer.InitialList())
	assert.True(t, c.Informer.HasSynced())
	assert.Equal(t, []string{"add a", "add b"}, r.calls)
	assert.Equal(t, c.API.ResourceVersion(), c.Informer.LastSyncResourceVersion())
	assert.Zero(t, c.Informer.Len(), "the list covers the queued events")
	assert.Zero(t, c.Informer.InitialList(), "once only")
	assert.Zero(t, c.Informer.Stats().Relists)

	_, err = c.API.Create(named("c"))
	require.NoError(t, err)
	assert.Equal(t, 1, c.Informer.DeliverAll(), "the watch runs from the list on")
	assert.Len(t, c.Informer.Pods(), 3)

	d := cluster.New(cluster.Options{Unsynced: true})
	_, err = d.API.Create(named("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, d.Informer.Relist(), "a relist before the first list is that list")
	assert.True(t, d.Informer.HasSynced())
	assert.True(t, cluster.New(cluster.Options{}).Informer.HasSynced())
}

func TestInformerPeek(t *testing.T) {
	c := cluster.New(cluster.Options{})
	_, err := c.API.Create(named("a"))
	require.NoError(t, err)
	ev, ok := c.Informer.Peek(0)
	require.True(t, ok)
	assert.Equal(t, cluster.Added, ev.Type)
	assert.Equal(t, "ns/a", ev.Key())
	assert.Equal(t, 1, c.Informer.Len(), "peeking leaves the event queued")
	_, ok = c.Informer.Peek(1)
	assert.False(t, ok)
	_, ok = c.Informer.Peek(-1)
	assert.False(t, ok)
}
