package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// recObserver returns an Observer over two ReplicaSets in "default": "web"
// (UID uid-web, minReadySeconds 10) and "api" (UID uid-api, 0), whose
// selectors are app=web and app=api, and the Tracker it feeds.
func recObserver(t *testing.T) (*reconcile.Observer, *expectations.Tracker) {
	t.Helper()
	tracker := expectations.New(expectations.Options{})
	owners := map[string]struct {
		uid string
		min int32
	}{"web": {"uid-web", 10}, "api": {"uid-api", 0}}
	o := &reconcile.Observer{
		Expectations: tracker,
		Resolve: func(ns string, ref metav1.OwnerReference) (reconcile.Owned, bool) {
			rs, ok := owners[ref.Name]
			if ns != "default" || !ok || string(ref.UID) != rs.uid {
				return reconcile.Owned{}, false
			}
			return reconcile.Owned{Key: reconcile.OwnerKey(ns, ref.Name), MinReadySeconds: rs.min}, true
		},
		Match: func(p *corev1.Pod) []string {
			switch p.Labels["app"] {
			case "web":
				return []string{"default/web"}
			case "api":
				return []string{"default/api"}
			}
			return nil
		},
	}
	return o, tracker
}

func recOwnerMeta(name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}
}

func TestObserverEvents(t *testing.T) {
	t0 := podtest.Epoch
	web := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	api := podtest.ControlledBy(recOwnerMeta("api"), "ReplicaSet", "apps/v1")
	stale := podtest.ControlledBy(&metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-old"}, "ReplicaSet", "apps/v1")
	wrongKind := podtest.ControlledBy(recOwnerMeta("web"), "StatefulSet", "apps/v1")
	webLabels := podtest.Labels(map[string]string{"app": "web"})
	apiLabels := podtest.Labels(map[string]string{"app": "api"})
	rv := podtest.ResourceVersion
	del := podtest.Deleting(t0)
	type pending struct{ webAdds, webDels, apiAdds, apiDels int }
	start := pending{2, 0, 2, 0} // before deletions are set
	cases := []struct {
		name     string
		dels     bool // expect deletions of web-0 and api-0 instead of creations
		event    func(o *reconcile.Observer) []reconcile.Request
		want     []reconcile.Request
		wantLeft pending
	}{
		{name: "R-11.1 add of a controlled pod observes a creation and enqueues",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodAdded(podtest.New("web-x", web, webLabels))
			},
			want: []reconcile.Request{{Key: "default/web"}}, wantLeft: pending{1, 0, 2, 0}},
		{name: "R-11.1 add with a deletion timestamp is a delete, never a creation",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodAdded(podtest.New("web-0", web, webLabels, del))
			},
			want: []reconcile.Request{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.1 add whose owner UID does not match is ignored",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodAdded(podtest.New("web-x", stale, webLabels))
			},
			wantLeft: start},
		{name: "R-11.1 add whose owner kind does not match is ignored",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodAdded(podtest.New("web-x", wrongKind, webLabels))
			},
			wantLeft: start},
		{name: "R-11.1 add of an orphan enqueues matching owners and never lowers",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodAdded(podtest.New("stray", apiLabels))
			},
			want: []reconcile.Request{{Key: "default/api"}}, wantLeft: start},
		{name: "R-11.1 an orphan without labels matches nothing",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodAdded(podtest.New("stray"))
			},
			wantLeft: start},
		{name: "R-11.2 update with equal resourceVersions (resync) does nothing",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("web-0", web, rv("5")), podtest.New("web-0", web, rv("5"), del))
			},
			dels: true, wantLeft: pending{0, 1, 0, 1}},
		{name: "R-11.2 update setting a deletion timestamp observes the deletion",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("web-0", web, webLabels, rv("5")), podtest.New("web-0", web, webLabels, rv("6"), del))
			},
			want: []reconcile.Request{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 deletion with changed labels handles old too (same owner: one count, two requests)",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("web-0", web, webLabels, rv("5")), podtest.New("web-0", web, apiLabels, rv("6"), del))
			},
			want: []reconcile.Request{{Key: "default/web"}, {Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 labels nil vs empty count as changed",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				old := podtest.New("web-0", web, rv("5"))
				cur := podtest.New("web-0", web, rv("6"), del)
				cur.Labels = map[string]string{}
				return o.PodUpdated(old, cur)
			},
			want: []reconcile.Request{{Key: "default/web"}, {Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 repeated terminating updates count the deletion once (R-3.2)",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				o.PodUpdated(podtest.New("web-0", web, rv("5")), podtest.New("web-0", web, rv("6"), del))
				o.PodUpdated(podtest.New("web-0", web, rv("6"), del), podtest.New("web-0", web, rv("7"), del))
				return o.PodDeleted(podtest.New("web-0", web, rv("7"), del))
			},
			want: []reconcile.Request{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 controller ref changed: old owner and new owner enqueued, no expectations",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", web, rv("5")), podtest.New("p", api, rv("6")))
			},
			want: []reconcile.Request{{Key: "default/web"}, {Key: "default/api"}}, wantLeft: start},
		{name: "R-11.2 released pod: old owner and matching owners enqueued",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", web, webLabels, rv("5")), podtest.New("p", apiLabels, rv("6")))
			},
			want: []reconcile.Request{{Key: "default/web"}, {Key: "default/api"}}, wantLeft: start},
		{name: "R-11.2 controlled pod turning ready with minReadySeconds > 0: an extra delayed request",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", web, rv("5"), podtest.NotReady()), podtest.New("p", web, rv("6"), podtest.Ready(t0)))
			},
			want: []reconcile.Request{{Key: "default/web"}, {Key: "default/web", After: 10 * time.Second}}, wantLeft: start},
		{name: "R-11.2 turning ready with minReadySeconds 0: one request",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", api, rv("5")), podtest.New("p", api, rv("6"), podtest.Ready(t0)))
			},
			want: []reconcile.Request{{Key: "default/api"}}, wantLeft: start},
		{name: "R-11.2 staying ready: one request",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", web, rv("5"), podtest.Ready(t0)), podtest.New("p", web, rv("6"), podtest.Ready(t0)))
			},
			want: []reconcile.Request{{Key: "default/web"}}, wantLeft: start},
		{name: "R-11.2 controlled pod whose owner does not resolve: nothing",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", stale, rv("5")), podtest.New("p", stale, rv("6"), webLabels))
			},
			wantLeft: start},
		{name: "R-11.2 orphan with unchanged labels and ref: nothing",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", webLabels, rv("5")), podtest.New("p", webLabels, rv("6")))
			},
			wantLeft: start},
		{name: "R-11.2 orphan with changed labels: matching owners",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodUpdated(podtest.New("p", webLabels, rv("5")), podtest.New("p", apiLabels, rv("6")))
			},
			want: []reconcile.Request{{Key: "default/api"}}, wantLeft: start},
		{name: "R-11.3 delete of a controlled pod observes its key and enqueues",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodDeleted(podtest.New("api-0", api))
			},
			want: []reconcile.Request{{Key: "default/api"}}, wantLeft: pending{0, 1, 0, 0}},
		{name: "R-11.3 delete of an unexpected pod enqueues without counting (R-3.2)",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodDeleted(podtest.New("api-9", api))
			},
			want: []reconcile.Request{{Key: "default/api"}}, wantLeft: pending{0, 1, 0, 1}},
		{name: "R-11.3 delete of an orphan or of an unresolved owner's pod: nothing",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return append(o.PodDeleted(podtest.New("web-0", webLabels)), o.PodDeleted(podtest.New("web-0", stale))...)
			},
			wantLeft: pending{0, 1, 0, 1}},
		{name: "R-11.3 a stale tombstone pod counts like the pod",
			dels: true,
			event: func(o *reconcile.Observer) []reconcile.Request {
				return o.PodDeleted(podtest.New("web-0", web, rv("1"))) // old state, no deletion timestamp
			},
			want: []reconcile.Request{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "nil pods yield nothing",
			event: func(o *reconcile.Observer) []reconcile.Request {
				return append(append(o.PodAdded(nil), o.PodUpdated(nil, nil)...), o.PodDeleted(nil)...)
			},
			wantLeft: start},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, tracker := recObserver(t)
			if tc.dels {
				tracker.ExpectDeletions("default/web", []string{"default/web-0"})
				tracker.ExpectDeletions("default/api", []string{"default/api-0"})
			} else {
				tracker.ExpectCreations("default/web", 2)
				tracker.ExpectCreations("default/api", 2)
			}
			got := tc.event(o)
			assert.Equal(t, tc.want, got)
			left := func(key string) (int, int) {
				a, d, ok := tracker.Pending(key)
				require.True(t, ok)
				return a, d
			}
			var p pending
			p.webAdds, p.webDels = left("default/web")
			p.apiAdds, p.apiDels = left("default/api")
			want := tc.wantLeft
			if tc.dels && want == start {
				want = pending{0, 1, 0, 1}
			}
			assert.Equal(t, want, p)
		})
	}
}

// an owner's deletion drops its counters and key sets and enqueues it.
func TestObserverOwnerDeleted(t *testing.T) {
	o, tracker := recObserver(t)
	tracker.ExpectDeletions("default/web", []string{"default/web-0"})
	assert.Equal(t, []reconcile.Request{{Key: "default/web"}}, o.OwnerDeleted("default/web"))
	_, _, ok := tracker.Pending("default/web")
	assert.False(t, ok)
	assert.True(t, tracker.Satisfied("default/web"))
}

// The zero Observer resolves nothing and records nothing.
func TestObserverZero(t *testing.T) {
	var o reconcile.Observer
	web := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	assert.Empty(t, o.PodAdded(podtest.New("p", web)))
	assert.Empty(t, o.PodDeleted(podtest.New("p", web)))
	assert.Empty(t, o.PodAdded(podtest.New("p", podtest.Labels(map[string]string{"a": "b"}))))
	assert.Equal(t, []reconcile.Request{{Key: "k"}}, o.OwnerDeleted("k"))
}

// Kind selects which controller refs resolve, for custom resources.
func TestObserverKind(t *testing.T) {
	o, tracker := recObserver(t)
	o.Kind = "PodSet"
	tracker.ExpectCreations("default/web", 1)
	podSet := podtest.ControlledBy(recOwnerMeta("web"), "PodSet", "example.com/v1")
	rsRef := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	assert.Empty(t, o.PodAdded(podtest.New("a", rsRef)))
	assert.Equal(t, []reconcile.Request{{Key: "default/web"}}, o.PodAdded(podtest.New("b", podSet)))
	assert.True(t, tracker.Satisfied("default/web"))
}

// Events never modify the pods passed in.
func TestObserverLeavesPodsAlone(t *testing.T) {
	o, tracker := recObserver(t)
	tracker.ExpectDeletions("default/web", []string{"default/web-0"})
	web := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	old := podtest.New("web-0", web, podtest.ResourceVersion("1"))
	cur := podtest.New("web-0", web, podtest.ResourceVersion("2"), podtest.Deleting(podtest.Epoch), podtest.Labels(map[string]string{"x": "y"}))
	oldCopy, curCopy := old.DeepCopy(), cur.DeepCopy()
	o.PodAdded(cur)
	o.PodUpdated(old, cur)
	o.PodDeleted(cur)
	assert.Equal(t, oldCopy, old)
	assert.Equal(t, curCopy, cur)
}

// Issue 7: for an owner whose creations are tracked by key, an add event
// counts only for an expected pod, once; counted owners count every add.
func TestObserverTrackedCreations(t *testing.T) {
	o, tracker := recObserver(t)
	tracker.ExpectCreationKeys("default/web", []string{"default/web-a", "default/web-b"})
	web := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	for _, name := range []string{"web-a", "web-a", "someone-elses", "web-b"} {
		assert.Equal(t, []reconcile.Request{{Key: "default/web"}}, o.PodAdded(podtest.New(name, web)), name)
	}
	snap, ok := tracker.Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, 0, snap.Adds, "web-a counted once, the foreign pod not at all")
	assert.True(t, snap.Satisfied)

	tracker.ExpectCreationKeys("default/web", []string{"default/web-c", "default/web-d"})
	o.PodAdded(podtest.New("web-a", web)) // a late event of the previous round
	adds, _, _ := tracker.Pending("default/web")
	assert.Equal(t, 2, adds, "a late add of the previous round does not count")
}
