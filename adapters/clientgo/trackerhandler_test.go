package clientgo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

const groupLabel = "example.com/group"

var groupKeys = perpod.KeysByOwner("Cluster", groupLabel)

// groupPod is pod name of owner's group (no owner: an orphan), at
// resourceVersion rv, terminating if deleting.
func groupPod(name, owner, group, rv string, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv,
		Labels: map[string]string{groupLabel: group}}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Cluster", Name: owner, UID: types.UID("u-" + owner), Controller: new(true)}}
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	return p
}

// groupTracker expects, under the key of group a of owner c, the creation
// of default/p and the deletion of default/q, and under group b's the
// deletion of default/q (a pod that may move from a to b).
func groupTracker() *perpod.Tracker {
	var tr perpod.Tracker
	tr.ExpectCreation("default/c/a", "default/p")
	tr.ExpectDeletion("default/c/a", "default/q")
	tr.ExpectDeletion("default/c/b", "default/q")
	return &tr
}

// pendingKeys is what tr still expects under the keys of groups a and b.
type pendingKeys struct{ aCreations, aDeletions, bDeletions []string }

func pendingOf(tr *perpod.Tracker) pendingKeys {
	var p pendingKeys
	p.aCreations, p.aDeletions = tr.Pending("default/c/a")
	_, p.bDeletions = tr.Pending("default/c/b")
	return p
}

func TestTrackPods(t *testing.T) {
	p, q := []string{"default/p"}, []string{"default/q"}
	cases := []struct {
		name  string
		event func(h cache.ResourceEventHandler)
		want  pendingKeys
	}{
		{"nothing", func(cache.ResourceEventHandler) {}, pendingKeys{p, q, q}},
		//
		{"add: a creation under the pod's key", func(h cache.ResourceEventHandler) {
			h.OnAdd(groupPod("p", "c", "a", "1", false), false)
		}, pendingKeys{nil, q, q}},
		{"add from the initial list", func(h cache.ResourceEventHandler) {
			h.OnAdd(groupPod("p", "c", "a", "1", false), true)
		}, pendingKeys{nil, q, q}},
		{"add of a pod of another group", func(h cache.ResourceEventHandler) {
			h.OnAdd(groupPod("p", "c", "z", "1", false), false)
		}, pendingKeys{p, q, q}},
		{"add of an orphan", func(h cache.ResourceEventHandler) {
			h.OnAdd(groupPod("p", "", "a", "1", false), false)
		}, pendingKeys{p, q, q}},
		{"add of a terminating pod is no creation", func(h cache.ResourceEventHandler) {
			h.OnAdd(groupPod("p", "c", "a", "1", true), false)
		}, pendingKeys{p, q, q}},
		{"add of a terminating pod is a deletion", func(h cache.ResourceEventHandler) {
			h.OnAdd(groupPod("q", "c", "a", "1", true), false)
		}, pendingKeys{p, nil, q}},
		//
		{"update without a deletion timestamp", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("p", "c", "a", "1", false), groupPod("p", "c", "a", "2", false))
		}, pendingKeys{p, q, q}},
		{"update to terminating: a deletion", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "a", "2", true))
		}, pendingKeys{p, nil, q}},
		{"resync of a terminating pod", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "2", true), groupPod("q", "c", "a", "2", true))
		}, pendingKeys{p, q, q}},
		{"terminating and relabelled: a deletion under both groups", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "b", "2", true))
		}, pendingKeys{p, nil, nil}},
		{"terminating with a new owner, same labels: the new keys only", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "1", false), groupPod("q", "d", "a", "2", true))
		}, pendingKeys{p, q, q}},
		{"relabelled, not terminating: nothing, the old group's deletion stays", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "b", "2", false))
		}, pendingKeys{p, q, q}},
		{"released, not terminating: nothing", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "1", false), groupPod("q", "", "a", "2", false))
		}, pendingKeys{p, q, q}},
		//
		{"delete", func(h cache.ResourceEventHandler) {
			h.OnDelete(groupPod("q", "c", "a", "1", false))
		}, pendingKeys{p, nil, q}},
		{"tombstone", func(h cache.ResourceEventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/q", Obj: groupPod("q", "c", "b", "1", false)})
		}, pendingKeys{p, q, nil}},
		{"delete of an orphan", func(h cache.ResourceEventHandler) {
			h.OnDelete(groupPod("q", "", "a", "1", false))
		}, pendingKeys{p, q, q}},
		{"objects that are not pods", func(h cache.ResourceEventHandler) {
			h.OnAdd(&corev1.Service{}, false)
			h.OnUpdate(&corev1.Service{}, groupPod("q", "c", "a", "2", true))
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/q"})
			h.OnDelete("junk")
		}, pendingKeys{p, q, q}},
		// each expected deletion counts once.
		{"every update of a terminating pod", func(h cache.ResourceEventHandler) {
			h.OnUpdate(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "a", "2", true))
			h.OnUpdate(groupPod("q", "c", "a", "2", true), groupPod("q", "c", "a", "3", true))
			h.OnDelete(groupPod("q", "c", "a", "3", true))
		}, pendingKeys{p, nil, q}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := groupTracker()
			tc.event(clientgo.TrackPods(tr, groupKeys, nil))
			assert.Equal(t, tc.want, pendingOf(tr))
		})
	}
}

// A group is satisfied once its pods' events have all arrived.
func TestTrackPodsSatisfies(t *testing.T) {
	tr := groupTracker()
	h := clientgo.TrackPods(tr, groupKeys, nil)
	h.OnAdd(groupPod("p", "c", "a", "1", false), false)
	creations, deletions := tr.Pending("default/c/a")
	assert.Nil(t, creations)
	assert.Equal(t, []string{"default/q"}, deletions)
	assert.False(t, tr.Satisfied("default/c/a"))
	h.OnDelete(groupPod("q", "c", "a", "1", false))
	assert.True(t, tr.Satisfied("default/c/a"))
	assert.False(t, tr.Satisfied("default/c/b"), "group b still waits for q, which it does not own")
}

// recorded is one call a chained handler received, with what the Tracker
// showed at that moment.
type recorded struct {
	call        string
	old, obj    any
	initialList bool
	aCreations  []string
	aDeletions  []string
}

// recorder is the caller's own handler: it records each call and what the
// Tracker showed when it came.
type recorder struct {
	tr    *perpod.Tracker
	calls []recorded
}

func (r *recorder) note(call string, old, obj any, initial bool) {
	c, d := r.tr.Pending("default/c/a")
	r.calls = append(r.calls, recorded{call, old, obj, initial, c, d})
}
func (r *recorder) OnAdd(obj any, initial bool) { r.note("add", nil, obj, initial) }
func (r *recorder) OnUpdate(old, obj any)       { r.note("update", old, obj, false) }
func (r *recorder) OnDelete(obj any)            { r.note("delete", nil, obj, false) }
func (r *recorder) reset() []recorded           { c := r.calls; r.calls = nil; return c }

// The caller's handler receives every event, unchanged (a tombstone stays
// a tombstone), after the Tracker has recorded it, so that a sync it
// starts sees the observation; objects that are not pods reach it too.
func TestTrackPodsChains(t *testing.T) {
	tr := groupTracker()
	next := &recorder{tr: tr}
	h := clientgo.TrackPods(tr, groupKeys, next)
	q := []string{"default/q"}

	added := groupPod("p", "c", "a", "1", false)
	h.OnAdd(added, true)
	assert.Equal(t, []recorded{{"add", nil, added, true, nil, q}}, next.reset())

	old, cur := groupPod("q", "c", "a", "1", false), groupPod("q", "c", "a", "2", true)
	h.OnUpdate(old, cur)
	assert.Equal(t, []recorded{{"update", old, cur, false, nil, nil}}, next.reset())

	tomb := cache.DeletedFinalStateUnknown{Key: "default/q", Obj: cur}
	h.OnDelete(tomb)
	assert.Equal(t, []recorded{{"delete", nil, tomb, false, nil, nil}}, next.reset())

	svc := &corev1.Service{}
	h.OnAdd(svc, false)
	h.OnUpdate(svc, svc)
	h.OnDelete(svc)
	assert.Len(t, next.reset(), 3)
	assert.Equal(t, "default/p", added.Namespace+"/"+added.Name, "the objects are not modified")
}

// A nil Tracker or nil keys records nothing and panics on nothing; the
// chained handler still runs. Keys that repeat a key count once.
func TestTrackPodsBadInput(t *testing.T) {
	pod := groupPod("p", "c", "a", "1", false)
	next := &recorder{tr: &perpod.Tracker{}}
	for _, h := range []cache.ResourceEventHandler{
		clientgo.TrackPods(nil, groupKeys, next),
		clientgo.TrackPods(groupTracker(), nil, next),
		clientgo.TrackPods(nil, nil, nil),
	} {
		assert.NotPanics(t, func() {
			h.OnAdd(pod, false)
			h.OnAdd(nil, false)
			h.OnUpdate(nil, pod)
			h.OnUpdate(pod, (*corev1.Pod)(nil))
			h.OnDelete(pod)
			h.OnDelete((*corev1.Pod)(nil))
		})
	}
	assert.Len(t, next.reset(), 12)
}

// Wired to a real informer over client-go's fake clientset, the Tracker
// sees the creation and the deletion of a group's pods.
func TestTrackPodsOnAnInformer(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cs := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods()
	var tr perpod.Tracker
	_, err := pods.Informer().AddEventHandler(clientgo.TrackPods(&tr, groupKeys, nil))
	require.NoError(t, err)
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }() // Shutdown waits for the informers ctx stops
	waitForCaches(t, ctx, factory)

	tr.ExpectCreation("default/c/a", "default/p")
	_, err = cs.CoreV1().Pods(ns).Create(ctx, groupPod("p", "c", "a", "", false), metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool { return tr.Satisfied("default/c/a") }, "the add event was not observed")

	tr.ExpectDeletion("default/c/a", "default/p")
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, "p", metav1.DeleteOptions{}))
	eventually(t, func() bool { return tr.Satisfied("default/c/a") }, "the delete event was not observed")
}
