package ctrlruntime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

const groupLabel = "example.com/group"

var groupKeys = perpod.KeysByOwner("ReplicaSet", groupLabel)

// groupPod is pod name of owner's group (no owner: an orphan), at
// resourceVersion rv, terminating if deleting.
func groupPod(name, owner, group, rv string, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv,
		Labels: map[string]string{groupLabel: group}}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID("u-" + owner), Controller: new(true)}}
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

// podEvents sends events to a handler: untyped (client.Object, as the
// builder's Watches) or typed (*corev1.Pod, as source.Kind).
type podEvents struct {
	create func(obj client.Object)
	update func(old, cur client.Object)
	delete func(obj client.Object, unknown bool)
}

func untypedEvents(ctx context.Context, h handler.EventHandler, q ctrlruntime.Queue) podEvents {
	return podEvents{
		create: func(obj client.Object) { h.Create(ctx, event.CreateEvent{Object: obj}, q) },
		update: func(old, cur client.Object) { h.Update(ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: cur}, q) },
		delete: func(obj client.Object, unknown bool) {
			h.Delete(ctx, event.DeleteEvent{Object: obj, DeleteStateUnknown: unknown}, q)
		},
	}
}

func typedEvents(ctx context.Context, h handler.TypedEventHandler[*corev1.Pod, crreconcile.Request], q ctrlruntime.Queue) podEvents {
	pod := func(obj client.Object) *corev1.Pod { p, _ := obj.(*corev1.Pod); return p }
	return podEvents{
		create: func(obj client.Object) { h.Create(ctx, event.TypedCreateEvent[*corev1.Pod]{Object: pod(obj)}, q) },
		update: func(old, cur client.Object) {
			h.Update(ctx, event.TypedUpdateEvent[*corev1.Pod]{ObjectOld: pod(old), ObjectNew: pod(cur)}, q)
		},
		delete: func(obj client.Object, unknown bool) {
			h.Delete(ctx, event.TypedDeleteEvent[*corev1.Pod]{Object: pod(obj), DeleteStateUnknown: unknown}, q)
		},
	}
}

func newQueue(t *testing.T) ctrlruntime.Queue {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]())
	t.Cleanup(q.ShutDown)
	return q
}

func TestTrackPods(t *testing.T) {
	p, q := []string{"default/p"}, []string{"default/q"}
	cases := []struct {
		name  string
		event func(e podEvents)
		want  pendingKeys
	}{
		{"nothing", func(podEvents) {}, pendingKeys{p, q, q}},
		//
		{"create: a creation under the pod's key", func(e podEvents) {
			e.create(groupPod("p", "c", "a", "1", false))
		}, pendingKeys{nil, q, q}},
		{"create of a pod of another group", func(e podEvents) {
			e.create(groupPod("p", "c", "z", "1", false))
		}, pendingKeys{p, q, q}},
		{"create of an orphan", func(e podEvents) {
			e.create(groupPod("p", "", "a", "1", false))
		}, pendingKeys{p, q, q}},
		{"create of a terminating pod is no creation", func(e podEvents) {
			e.create(groupPod("p", "c", "a", "1", true))
		}, pendingKeys{p, q, q}},
		{"create of a terminating pod is a deletion", func(e podEvents) {
			e.create(groupPod("q", "c", "a", "1", true))
		}, pendingKeys{p, nil, q}},
		//
		{"update without a deletion timestamp", func(e podEvents) {
			e.update(groupPod("p", "c", "a", "1", false), groupPod("p", "c", "a", "2", false))
		}, pendingKeys{p, q, q}},
		{"update to terminating: a deletion", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "a", "2", true))
		}, pendingKeys{p, nil, q}},
		{"resync of a terminating pod", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "2", true), groupPod("q", "c", "a", "2", true))
		}, pendingKeys{p, q, q}},
		{"terminating and relabelled: a deletion under both groups", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "b", "2", true))
		}, pendingKeys{p, nil, nil}},
		{"terminating with a new owner, same labels: the new keys only", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "1", false), groupPod("q", "d", "a", "2", true))
		}, pendingKeys{p, q, q}},
		{"relabelled, not terminating: nothing, the old group's deletion stays", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "b", "2", false))
		}, pendingKeys{p, q, q}},
		{"released, not terminating: nothing", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "1", false), groupPod("q", "", "a", "2", false))
		}, pendingKeys{p, q, q}},
		//
		{"delete", func(e podEvents) {
			e.delete(groupPod("q", "c", "a", "1", false), false)
		}, pendingKeys{p, nil, q}},
		{"delete whose final state is unknown", func(e podEvents) {
			e.delete(groupPod("q", "c", "b", "1", false), true)
		}, pendingKeys{p, q, nil}},
		{"delete of an orphan", func(e podEvents) {
			e.delete(groupPod("q", "", "a", "1", false), false)
		}, pendingKeys{p, q, q}},
		{"objects that are not pods, nil objects", func(e podEvents) {
			e.create(&corev1.Service{})
			e.update(&corev1.Service{}, groupPod("q", "c", "a", "2", true))
			e.delete(&corev1.Service{}, false)
			e.create(nil)
			e.update(nil, nil)
			e.delete(nil, true)
		}, pendingKeys{p, q, q}},
		// each expected deletion counts once.
		{"every update of a terminating pod", func(e podEvents) {
			e.update(groupPod("q", "c", "a", "1", false), groupPod("q", "c", "a", "2", true))
			e.update(groupPod("q", "c", "a", "2", true), groupPod("q", "c", "a", "3", true))
			e.delete(groupPod("q", "c", "a", "3", true), false)
		}, pendingKeys{p, nil, q}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := groupTracker()
			tc.event(untypedEvents(t.Context(), ctrlruntime.TrackPods[client.Object, crreconcile.Request](tr, groupKeys, nil), newQueue(t)))
			assert.Equal(t, tc.want, pendingOf(tr), "untyped")

			tr = groupTracker()
			tc.event(typedEvents(t.Context(), ctrlruntime.TrackPods[*corev1.Pod, crreconcile.Request](tr, groupKeys, nil), newQueue(t)))
			assert.Equal(t, tc.want, pendingOf(tr), "typed")
		})
	}
}

// Wrapping handler.EnqueueRequestForOwner: every event reaches it with the
// same queue, after the Tracker has recorded it, so the reconcile it
// enqueues sees the observation; objects that are not pods and generic
// events reach it too.
func TestTrackPodsChains(t *testing.T) {
	tr := groupTracker()
	owner := handler.EnqueueRequestForOwner(scheme(t), mapper(), &appsv1.ReplicaSet{}, handler.OnlyControllerOwner())
	var seen []pendingKeys
	next := handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q ctrlruntime.Queue) {
			seen = append(seen, pendingOf(tr))
			owner.Create(ctx, e, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q ctrlruntime.Queue) {
			seen = append(seen, pendingOf(tr))
			owner.Update(ctx, e, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q ctrlruntime.Queue) {
			seen = append(seen, pendingOf(tr))
			owner.Delete(ctx, e, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q ctrlruntime.Queue) {
			seen = append(seen, pendingOf(tr))
			owner.Generic(ctx, e, q)
		},
	}
	h := ctrlruntime.TrackPods(tr, groupKeys, next) // inferred: a handler.EventHandler, as Watches takes
	q := newQueue(t)
	ctx := t.Context()
	c := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "c"}}
	d := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "d"}}
	drain := func() []crreconcile.Request {
		var out []crreconcile.Request
		for q.Len() > 0 {
			item, _ := q.Get()
			q.Done(item)
			out = append(out, item)
		}
		return out
	}

	h.Create(ctx, event.CreateEvent{Object: groupPod("p", "c", "a", "1", false)}, q)
	assert.Equal(t, []crreconcile.Request{c}, drain())
	h.Update(ctx, event.UpdateEvent{ObjectOld: groupPod("q", "c", "a", "1", false), ObjectNew: groupPod("q", "d", "b", "2", false)}, q)
	assert.ElementsMatch(t, []crreconcile.Request{c, d}, drain(), "both owners of a pod that changed owner")
	h.Delete(ctx, event.DeleteEvent{Object: groupPod("q", "c", "a", "2", false), DeleteStateUnknown: true}, q)
	assert.Equal(t, []crreconcile.Request{c}, drain())
	h.Generic(ctx, event.GenericEvent{Object: groupPod("q", "c", "a", "2", false)}, q)
	assert.Equal(t, []crreconcile.Request{c}, drain())
	h.Create(ctx, event.CreateEvent{Object: &corev1.Service{}}, q)
	assert.Empty(t, drain())

	qk := []string{"default/q"}
	assert.Equal(t, []pendingKeys{
		{nil, qk, qk}, // the create was recorded before next ran
		{nil, qk, qk}, // a change of owner and group records nothing
		{nil, nil, qk},
		{nil, nil, qk},
		{nil, nil, qk},
	}, seen)
}

// A nil Tracker or nil keys records nothing and panics on nothing; the
// wrapped handler still runs. Keys that repeat a key count once.
func TestTrackPodsBadInput(t *testing.T) {
	pod := groupPod("p", "c", "a", "1", false)
	calls := 0
	count := handler.Funcs{
		CreateFunc: func(context.Context, event.CreateEvent, ctrlruntime.Queue) { calls++ },
		UpdateFunc: func(context.Context, event.UpdateEvent, ctrlruntime.Queue) { calls++ },
		DeleteFunc: func(context.Context, event.DeleteEvent, ctrlruntime.Queue) { calls++ },
	}
	for _, h := range []handler.EventHandler{
		ctrlruntime.TrackPods(nil, groupKeys, count),
		ctrlruntime.TrackPods(groupTracker(), nil, count),
		ctrlruntime.TrackPods[client.Object, crreconcile.Request](nil, nil, nil),
	} {
		assert.NotPanics(t, func() {
			e := untypedEvents(t.Context(), h, newQueue(t))
			e.create(pod)
			e.update(pod, pod)
			e.delete(pod, false)
			h.Generic(t.Context(), event.GenericEvent{Object: pod}, newQueue(t))
		})
	}
	assert.Equal(t, 6, calls)
}

// The shapes a user writes compile and build a controller (in a manager
// that is never started): the builder's Watches around
// EnqueueRequestForOwner, and a typed source.Kind around its typed twin.
func TestTrackPodsInABuilder(t *testing.T) {
	mgr := newManager(t)
	var tr perpod.Tracker
	noop := crreconcile.Func(func(context.Context, crreconcile.Request) (crreconcile.Result, error) {
		return crreconcile.Result{}, nil
	})
	err := ctrl.NewControllerManagedBy(mgr).Named("groups").For(&appsv1.ReplicaSet{}).
		Watches(&corev1.Pod{}, ctrlruntime.TrackPods(&tr, groupKeys,
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &appsv1.ReplicaSet{}, handler.OnlyControllerOwner()))).
		Complete(noop)
	require.NoError(t, err)

	err = ctrl.NewControllerManagedBy(mgr).Named("groups-typed").For(&appsv1.ReplicaSet{}).
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.Pod{}, ctrlruntime.TrackPods(&tr, groupKeys,
			handler.TypedEnqueueRequestForOwner[*corev1.Pod](mgr.GetScheme(), mgr.GetRESTMapper(), &appsv1.ReplicaSet{}, handler.OnlyControllerOwner())))).
		Complete(noop)
	require.NoError(t, err)
}
