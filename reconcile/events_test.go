package reconcile_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// eventRS returns a ReplicaSet "default/<name>" with UID "uid-<name>", the
// selector and template labels app=<name>, and minReadySeconds.
func eventRS(name string, minReady int32) *appsv1.ReplicaSet {
	rs := recRS(1)
	rs.Name, rs.UID = name, types.UID("uid-"+name)
	labels := map[string]string{"app": name}
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	rs.Spec.Template.Labels = labels
	rs.Spec.MinReadySeconds = minReady
	return rs
}

// recEvents returns a Controller over two ReplicaSets in "default": "web"
// (UID uid-web, minReadySeconds 10) and "api" (UID uid-api, 0), whose
// selectors are app=web and app=api, and its Tracker.
func recEvents(t *testing.T) (*recController, *expectations.Tracker) {
	t.Helper()
	c := newRecController(t, newRecOwners(eventRS("web", 10), eventRS("api", 0)), nil, nil)
	return c, c.Tracker()
}

func TestControllerPodEvents(t *testing.T) {
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
		event    func(o *recController) []reconcile.SyncRequest
		want     []reconcile.SyncRequest
		wantLeft pending
	}{
		{name: "R-11.1 add of a controlled pod observes a creation and enqueues",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodAdded(podtest.New("web-x", web, webLabels))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}}, wantLeft: pending{1, 0, 2, 0}},
		{name: "R-11.1 add with a deletion timestamp is a delete, never a creation",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodAdded(podtest.New("web-0", web, webLabels, del))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.1 add whose owner UID does not match is ignored",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodAdded(podtest.New("web-x", stale, webLabels))
			},
			wantLeft: start},
		{name: "R-11.1 add whose owner kind does not match is ignored",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodAdded(podtest.New("web-x", wrongKind, webLabels))
			},
			wantLeft: start},
		{name: "R-11.1 add of an orphan enqueues matching owners and never lowers",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodAdded(podtest.New("stray", apiLabels))
			},
			want: []reconcile.SyncRequest{{Key: "default/api"}}, wantLeft: start},
		{name: "R-11.1 an orphan without labels matches nothing",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodAdded(podtest.New("stray"))
			},
			wantLeft: start},
		{name: "R-11.2 update with equal resourceVersions (resync) does nothing",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("web-0", web, rv("5")), podtest.New("web-0", web, rv("5"), del))
			},
			dels: true, wantLeft: pending{0, 1, 0, 1}},
		{name: "R-11.2 update setting a deletion timestamp observes the deletion",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("web-0", web, webLabels, rv("5")), podtest.New("web-0", web, webLabels, rv("6"), del))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 deletion with changed labels handles old too (same owner: one count, two requests)",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("web-0", web, webLabels, rv("5")), podtest.New("web-0", web, apiLabels, rv("6"), del))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}, {Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 labels nil vs empty count as changed",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				old := podtest.New("web-0", web, rv("5"))
				cur := podtest.New("web-0", web, rv("6"), del)
				cur.Labels = map[string]string{}
				return o.PodUpdated(old, cur)
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}, {Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 repeated terminating updates count the deletion once (R-3.2)",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				o.PodUpdated(podtest.New("web-0", web, rv("5")), podtest.New("web-0", web, rv("6"), del))
				o.PodUpdated(podtest.New("web-0", web, rv("6"), del), podtest.New("web-0", web, rv("7"), del))
				return o.PodDeleted(podtest.New("web-0", web, rv("7"), del))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "R-11.2 controller ref changed: old owner and new owner enqueued, no expectations",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", web, rv("5")), podtest.New("p", api, rv("6")))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}, {Key: "default/api"}}, wantLeft: start},
		{name: "R-11.2 released pod: old owner and matching owners enqueued",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", web, webLabels, rv("5")), podtest.New("p", apiLabels, rv("6")))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}, {Key: "default/api"}}, wantLeft: start},
		{name: "R-11.2 controlled pod turning ready with minReadySeconds > 0: an extra delayed request",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", web, rv("5"), podtest.NotReady()), podtest.New("p", web, rv("6"), podtest.Ready(t0)))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}, {Key: "default/web", After: 10 * time.Second}}, wantLeft: start},
		{name: "R-11.2 turning ready with minReadySeconds 0: one request",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", api, rv("5")), podtest.New("p", api, rv("6"), podtest.Ready(t0)))
			},
			want: []reconcile.SyncRequest{{Key: "default/api"}}, wantLeft: start},
		{name: "R-11.2 staying ready: one request",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", web, rv("5"), podtest.Ready(t0)), podtest.New("p", web, rv("6"), podtest.Ready(t0)))
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}}, wantLeft: start},
		{name: "R-11.2 controlled pod whose owner does not resolve: nothing",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", stale, rv("5")), podtest.New("p", stale, rv("6"), webLabels))
			},
			wantLeft: start},
		{name: "R-11.2 orphan with unchanged labels and ref: nothing",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", webLabels, rv("5")), podtest.New("p", webLabels, rv("6")))
			},
			wantLeft: start},
		{name: "R-11.2 orphan with changed labels: matching owners",
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodUpdated(podtest.New("p", webLabels, rv("5")), podtest.New("p", apiLabels, rv("6")))
			},
			want: []reconcile.SyncRequest{{Key: "default/api"}}, wantLeft: start},
		{name: "R-11.3 delete of a controlled pod observes its key and enqueues",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodDeleted(podtest.New("api-0", api))
			},
			want: []reconcile.SyncRequest{{Key: "default/api"}}, wantLeft: pending{0, 1, 0, 0}},
		{name: "R-11.3 delete of an unexpected pod enqueues without counting (R-3.2)",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodDeleted(podtest.New("api-9", api))
			},
			want: []reconcile.SyncRequest{{Key: "default/api"}}, wantLeft: pending{0, 1, 0, 1}},
		{name: "R-11.3 delete of an orphan or of an unresolved owner's pod: nothing",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return append(o.PodDeleted(podtest.New("web-0", webLabels)), o.PodDeleted(podtest.New("web-0", stale))...)
			},
			wantLeft: pending{0, 1, 0, 1}},
		{name: "R-11.3 a stale tombstone pod counts like the pod",
			dels: true,
			event: func(o *recController) []reconcile.SyncRequest {
				return o.PodDeleted(podtest.New("web-0", web, rv("1"))) // old state, no deletion timestamp
			},
			want: []reconcile.SyncRequest{{Key: "default/web"}}, wantLeft: pending{0, 0, 0, 1}},
		{name: "nil pods yield nothing",
			event: func(o *recController) []reconcile.SyncRequest {
				return append(append(o.PodAdded(nil), o.PodUpdated(nil, nil)...), o.PodDeleted(nil)...)
			},
			wantLeft: start},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, tracker := recEvents(t)
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

// Events never modify the pods passed in.
func TestControllerEventsLeavePodsAlone(t *testing.T) {
	o, tracker := recEvents(t)
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
func TestControllerEventsTrackedCreations(t *testing.T) {
	o, tracker := recEvents(t)
	tracker.ExpectCreationKeys("default/web", []string{"default/web-a", "default/web-b"})
	web := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	for _, name := range []string{"web-a", "web-a", "someone-elses", "web-b"} {
		assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, o.PodAdded(podtest.New(name, web)), name)
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

// an owner's deletion drops its counters, key sets and names and
// enqueues it; the Controller then holds nothing for it.
func TestControllerOwnerDeleted(t *testing.T) {
	o, tracker := recEvents(t)
	web, _ := o.owners.Get("default", "web")
	_, err := o.Sync(t.Context(), "default/web") // remembers the key
	require.NoError(t, err)
	tracker.ExpectDeletions("default/web", []string{"default/web-0"})
	require.Equal(t, 1, o.Len())
	assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, o.OwnerDeleted(web))
	_, _, ok := tracker.Pending("default/web")
	assert.False(t, ok)
	assert.True(t, tracker.Satisfied("default/web"))
	assert.Equal(t, 0, o.Len())
}

// Len also counts an owner whose created pods the creation
// breaker has not yet seen active, with no expectations left; a sync that
// sees them active drops that, and so does the owner's deletion.
func TestControllerLenCountsUnseenCreations(t *testing.T) {
	for _, seen := range []bool{true, false} {
		t.Run(fmt.Sprintf("seen=%v", seen), func(t *testing.T) {
			rs := recRS(2)
			c := newRecController(t, newRecOwners(rs), nil, nil)
			res, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			require.Len(t, res.Outcome.Created, 2)
			c.Tracker().Delete("default/web") // only the breaker holds the owner now
			assert.Equal(t, 1, c.Len())
			if seen {
				c.pods.mu.Lock()
				c.pods.pods = res.Outcome.Created
				c.pods.mu.Unlock()
				res, err = c.Sync(t.Context(), "default/web")
				require.NoError(t, err)
				require.Len(t, res.Active, 2)
			} else {
				assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, c.OwnerDeleted(rs))
			}
			assert.Equal(t, 0, c.Len())
		})
	}
}

// an owner recreated under the same name (a new UID) forgets the
// old incarnation's expectations; an update without a UID change keeps them.
// An add enqueues.
func TestControllerOwnerUpdated(t *testing.T) {
	o, tracker := recEvents(t)
	web, _ := o.owners.Get("default", "web")
	tracker.ExpectCreations("default/web", 2)
	_, err := o.Sync(t.Context(), "default/web")
	require.NoError(t, err)

	same := web.DeepCopy()
	same.Generation++
	assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, o.OwnerUpdated(web, same))
	adds, _, ok := tracker.Pending("default/web")
	require.True(t, ok)
	assert.Equal(t, 2, adds, "same UID: expectations kept")

	recreated := web.DeepCopy()
	recreated.UID = "uid-web-2"
	assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, o.OwnerUpdated(web, recreated))
	_, _, ok = tracker.Pending("default/web")
	assert.False(t, ok, "new UID: the old incarnation is forgotten")
	assert.Equal(t, 0, o.Len())

	assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, o.OwnerAdded(web))
	assert.Empty(t, o.OwnerAdded(nil))
	assert.Empty(t, o.OwnerUpdated(nil, nil))
	assert.Empty(t, o.OwnerDeleted(nil))
}

// Config.Kind selects which controller refs resolve, for custom
// resources; only the kind is compared, not the API version.
func TestControllerEventsKind(t *testing.T) {
	o := newRecController(t, newRecOwners(eventRS("web", 0)), nil, func(c *reconcile.Config[*appsv1.ReplicaSet]) {
		c.Kind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "PodSet"}
	})
	tracker := o.Tracker()
	tracker.ExpectCreations("default/web", 1)
	podSet := podtest.ControlledBy(recOwnerMeta("web"), "PodSet", "example.com/v2")
	rsRef := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	assert.Empty(t, o.PodAdded(podtest.New("a", rsRef)))
	assert.Equal(t, []reconcile.SyncRequest{{Key: "default/web"}}, o.PodAdded(podtest.New("b", podSet)))
	assert.True(t, tracker.Satisfied("default/web"))
}

// orphans match owners by selector in the pod's namespace
// only; owners with an empty, nil or invalid selector match nothing; an
// owner lister error matches nothing.
func TestControllerOrphanMatching(t *testing.T) {
	empty := eventRS("empty", 0)
	empty.Spec.Selector = &metav1.LabelSelector{}
	nilSel := eventRS("nilsel", 0)
	nilSel.Spec.Selector = nil
	bad := eventRS("bad", 0)
	bad.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	both := eventRS("both", 0)
	both.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "x"}}
	other := eventRS("web", 0)
	other.Namespace = "other"
	owners := newRecOwners(eventRS("web", 0), empty, nilSel, bad, both, other)
	o := newRecController(t, owners, nil, nil)
	pod := podtest.New("stray", podtest.Labels(map[string]string{"app": "web", "tier": "x"}))
	assert.ElementsMatch(t, []reconcile.SyncRequest{{Key: "default/web"}, {Key: "default/both"}}, o.PodAdded(pod))
	owners.listErr = assert.AnError
	assert.Empty(t, o.PodAdded(pod))
}

// The zero Controller and a nil one do nothing and never panic.
func TestControllerZero(t *testing.T) {
	var z reconcile.Controller[*appsv1.ReplicaSet]
	web := podtest.ControlledBy(recOwnerMeta("web"), "ReplicaSet", "apps/v1")
	assert.Empty(t, z.PodAdded(podtest.New("p", web)))
	assert.Empty(t, z.PodUpdated(podtest.New("p", web), podtest.New("p", web, podtest.ResourceVersion("2"))))
	assert.Empty(t, z.PodDeleted(podtest.New("p", web)))
	assert.Equal(t, 0, z.Len())
	assert.Nil(t, z.Tracker())
	assert.Nil(t, z.Gate())
	_, err := z.Sync(t.Context(), "default/web")
	assert.Error(t, err)
	var nilc *reconcile.Controller[*appsv1.ReplicaSet]
	assert.Equal(t, 0, nilc.Len())
	assert.Nil(t, nilc.Gate())
	assert.Empty(t, nilc.PodAdded(podtest.New("p", web)))
}
