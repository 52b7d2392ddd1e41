package reconcile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// stampLabel is the label a pod control with owned pods stamps on every
// pod it creates (adapters: PodControl.Labels).
var stampLabel = map[string]string{"example.com/managed-by": "web-controller"}

// ownedView is what an owned-pods cache (adapters: OwnedPods) holds of
// pods: those carrying the stamp and, with dropFinished, neither Succeeded
// nor Failed.
func ownedView(pods []*corev1.Pod, dropFinished bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Labels["example.com/managed-by"] != stampLabel["example.com/managed-by"] {
			continue
		}
		if dropFinished && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// what a sync does over an owned-pods cache, next to upstream's
// all-pods view of the same cluster.
func TestOwnedPodsView(t *testing.T) {
	rs := recRS(2)
	mine := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	web := podtest.Labels(map[string]string{"app": "web"})
	stamped := podtest.Labels(stampLabel)
	running := podtest.Phase(corev1.PodRunning)
	type view struct {
		adopted, released, creates, active int
	}
	for _, tc := range []struct {
		name         string
		pods         []*corev1.Pod
		dropFinished bool
		upstream     view // over every pod
		owned        view // over ownedView
	}{
		{
			name:     "an orphan without the label is never seen, so never adopted",
			pods:     []*corev1.Pod{podtest.New("a", mine, web, stamped, running), podtest.New("orphan", web, running)},
			upstream: view{adopted: 1, active: 2},
			owned:    view{creates: 1, active: 1},
		},
		{
			name:     "an orphan with the label is adopted, as upstream",
			pods:     []*corev1.Pod{podtest.New("a", mine, web, stamped, running), podtest.New("orphan", web, stamped, running)},
			upstream: view{adopted: 1, active: 2},
			owned:    view{adopted: 1, active: 2},
		},
		{
			name: "a released pod keeps the label",
			pods: []*corev1.Pod{
				podtest.New("a", mine, web, stamped, running), podtest.New("b", mine, web, stamped, running),
				podtest.New("moved", mine, stamped, running, podtest.Labels(map[string]string{"app": "api"})),
			},
			upstream: view{released: 1, active: 2},
			owned:    view{released: 1, active: 2},
		},
		{
			name: "a controlled pod whose label a user removed is not seen: replaced, not counted",
			pods: []*corev1.Pod{
				podtest.New("a", mine, web, stamped, running), podtest.New("unlabeled", mine, web, running),
			},
			upstream: view{active: 2},
			owned:    view{creates: 1, active: 1},
		},
		{
			name: "finished pods: no sync reads them (R-10.5), so dropping them changes nothing",
			pods: []*corev1.Pod{
				podtest.New("a", mine, web, stamped, running),
				podtest.New("failed", mine, web, stamped, podtest.Phase(corev1.PodFailed)),
				podtest.New("done-orphan", web, stamped, podtest.Phase(corev1.PodSucceeded)),
				podtest.New("failed-moved", mine, stamped, podtest.Phase(corev1.PodFailed)),
			},
			dropFinished: true,
			upstream:     view{creates: 1, active: 1},
			owned:        view{creates: 1, active: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, side := range []struct {
				name string
				pods []*corev1.Pod
				want view
			}{{"upstream", tc.pods, tc.upstream}, {"owned", ownedView(tc.pods, tc.dropFinished), tc.owned}} {
				c := newRecController(t, newRecOwners(rs), side.pods, nil)
				res, err := c.Sync(t.Context(), "default/web")
				require.NoError(t, err, side.name)
				assert.Equal(t, side.want, view{len(res.Adopted), len(res.Released), len(c.control.creates()), len(res.Active)}, side.name)
				assert.Empty(t, c.control.deletes(), side.name)
				for _, call := range c.patcher.recorded() {
					p := podtest.New(call.Pod[len("default/"):], mine, stamped)
					p.UID = types.UID("uid-" + p.Name)
					require.NoError(t, applyOwnerPatch(p, []byte(call.Data)))
					assert.Equal(t, "web-controller", p.Labels["example.com/managed-by"], "adoption and release patches leave the label: the pod stays in view")
				}
			}
		})
	}
}

// with dropFinished, a pod that finishes leaves the cache as a
// delete event; the handlers then enqueue its owner as the update would
// have, and a sync counts exactly what it counts over the full cache.
func TestOwnedPodsFinishedPodIsADelete(t *testing.T) {
	rs := recRS(2)
	pods := recOwned(rs, 2, podtest.Labels(stampLabel), podtest.Phase(corev1.PodRunning))
	full := newRecController(t, newRecOwners(rs), pods, nil)
	owned := newRecController(t, newRecOwners(rs), pods, nil)
	_, err := full.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	_, err = owned.Sync(t.Context(), "default/web")
	require.NoError(t, err)

	failed := pods[1].DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	failed.ResourceVersion = "9"
	require.False(t, podrank.IsActive(failed))
	assert.Equal(t, full.PodUpdated(pods[1], failed), owned.PodDeleted(pods[1]), "the owner is enqueued either way")
	full.pods.pods = []*corev1.Pod{pods[0], failed}
	owned.pods.pods = ownedView(full.pods.pods, true)

	r1, err := full.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	r2, err := owned.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Equal(t, r1.Counts, r2.Counts)
	assert.Equal(t, r1.Diff, r2.Diff)
	assert.Len(t, full.control.creates(), 1, "a replacement")
	assert.Len(t, owned.control.creates(), 1, "the same replacement")
}

// a controlled pod whose labels come back reappears as an add.
// Counter expectations take it for one of the owner's creations, as
// upstream takes any add of a controlled pod; key-tracked creations
// (TrackCreations) do not.
func TestOwnedPodsRestoredLabelIsAnAdd(t *testing.T) {
	rs := recRS(2)
	restored := podtest.New("restored", podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.Labels(map[string]string{"app": "web"}), podtest.Labels(stampLabel))
	for _, tc := range []struct {
		name     string
		track    bool
		wantAdds int
	}{{"counted", false, 1}, {"key-tracked", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.SetTrackCreations(tc.track) })
			_, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			require.Len(t, c.control.creates(), 2)
			c.PodAdded(restored)
			adds, _, ok := c.Tracker().Pending("default/web")
			require.True(t, ok)
			assert.Equal(t, tc.wantAdds, adds)
		})
	}
}
