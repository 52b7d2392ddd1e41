package reconcile_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// listOnlyPods hides a Pods' ListByController: Sync must fall back to List.
type listOnlyPods struct{ reconcile.Pods }

// listOnlyOwners hides an Owners' ListByController.
type listOnlyOwners struct {
	reconcile.Owners[*appsv1.ReplicaSet]
}

// indexedPods is a PodsByController over fleetPods that counts its calls.
type indexedPods struct {
	*fleetPods
	lists, byController atomic.Int32
}

func (p *indexedPods) List(namespace string) ([]*corev1.Pod, error) {
	p.lists.Add(1)
	return p.fleetPods.List(namespace)
}

func (p *indexedPods) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	p.byController.Add(1)
	return p.fleetPods.ListByController(namespace, kind, name, uid)
}

// controlledBy returns a pod option for a controller ownerRef.
func controlledBy(kind, name string, uid types.UID) podtest.Option {
	return podtest.ControlledBy(&metav1.ObjectMeta{Name: name, UID: uid}, kind, "apps/v1")
}

// a sync reads the owner's pods (controller ownerRef with
// its kind, name and UID) and the namespace's orphans, through the index
// when Pods offers one and by listing the namespace otherwise, and both
// claim, adopt and release exactly the same pods.
func TestSyncReadsTheOwnersPodsAndOrphans(t *testing.T) {
	rs := recRS(2)
	web := podtest.Labels(map[string]string{"app": "web"})
	other := podtest.Labels(map[string]string{"app": "other"})
	ready := podtest.Ready(podtest.Epoch)
	pods := []*corev1.Pod{
		podtest.New("owned", controlledBy("ReplicaSet", "web", "uid-web"), web, ready),
		podtest.New("owned-unmatched", controlledBy("ReplicaSet", "web", "uid-web"), other, ready),
		podtest.New("other-owner", controlledBy("ReplicaSet", "db", "uid-db"), web, ready),
		podtest.New("same-name-other-uid", controlledBy("ReplicaSet", "web", "uid-old-web"), web, ready),
		podtest.New("same-name-other-kind", controlledBy("PodSet", "web", "uid-podset-web"), web, ready),
		podtest.New("same-uid-other-kind", controlledBy("PodSet", "web", "uid-web"), web, ready),
		podtest.New("same-uid-other-name", controlledBy("ReplicaSet", "web2", "uid-web"), web, ready),
		podtest.New("orphan", web, ready),
		podtest.New("orphan-unmatched", other, ready),
		podtest.New("orphan-elsewhere", web, ready, podtest.Namespace("elsewhere")),
		podtest.New("owned-elsewhere", controlledBy("ReplicaSet", "web", "uid-web"), web, ready, podtest.Namespace("elsewhere")),
	}
	for i, p := range pods {
		p.UID = types.UID("pod-" + strconv.Itoa(i))
	}
	type seen struct {
		active, adopted, released []string
		patches                   []patchCall
	}
	run := func(t *testing.T, p reconcile.Pods) seen {
		t.Helper()
		r := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
			cfg.Cluster.Pods = p
		})
		res, err := r.Sync(t.Context(), "default/web")
		require.NoError(t, err)
		return seen{active: names(res.Active), adopted: names(res.Adopted), released: names(res.Released), patches: r.patcher.recorded()}
	}
	ix := &indexedPods{fleetPods: newFleetPods(pods)}
	indexed := run(t, ix)
	assert.Zero(t, ix.lists.Load(), "an indexed sync never lists the namespace")
	assert.EqualValues(t, 1, ix.byController.Load())
	listed := run(t, listOnlyPods{&recPodList{pods: pods}})

	assert.ElementsMatch(t, []string{"owned", "orphan"}, indexed.active)
	assert.Equal(t, []string{"orphan"}, indexed.adopted)
	assert.Equal(t, []string{"owned-unmatched"}, indexed.released)
	assert.Equal(t, indexed.adopted, listed.adopted)
	assert.Equal(t, indexed.released, listed.released)
	assert.ElementsMatch(t, indexed.active, listed.active)
	assert.ElementsMatch(t, indexed.patches, listed.patches)
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// the related owners are found by controller UID through
// OwnersByController when Owners offers it, by listing otherwise, with the
// same deletion choice.
func TestRelatedOwnersByControllerUID(t *testing.T) {
	dep := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d", Controller: ptrTrue()}
	web := eventRS("web", 0)
	web.OwnerReferences = []metav1.OwnerReference{dep}
	web.Spec.Replicas = ptrInt32(1)
	sibling := eventRS("sib", 0)
	sibling.OwnerReferences = []metav1.OwnerReference{dep}
	stranger := eventRS("stranger", 0)
	mine := podtest.ControlledBy(web, "ReplicaSet", "apps/v1")
	webL := podtest.Labels(map[string]string{"app": "web"})
	pods := []*corev1.Pod{
		podtest.New("a", mine, webL, podtest.Node("n1"), podtest.Created(podtest.Epoch.Add(1))),
		podtest.New("b", mine, webL, podtest.Node("n2")),
		podtest.New("sib-0", podtest.Labels(map[string]string{"app": "sib"}), podtest.Node("n2")),
		podtest.New("stranger-0", podtest.Labels(map[string]string{"app": "stranger"}), podtest.Node("n1")),
		podtest.New("stranger-1", podtest.Labels(map[string]string{"app": "stranger"}), podtest.Node("n1")),
	}
	for _, tc := range []struct {
		name   string
		owners reconcile.Owners[*appsv1.ReplicaSet]
	}{
		{name: "indexed", owners: newRecOwners(web, sibling, stranger)},
		{name: "listed", owners: listOnlyOwners{newRecOwners(web, sibling, stranger)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecController(t, newRecOwners(), pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Cluster.Owners = tc.owners
				cfg.Cluster.CachesSynced = alwaysSynced
			})
			res, err := r.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			require.NoError(t, res.RelatedErr)
			require.Len(t, res.Outcome.Victims, 1)
			assert.Equal(t, "b", res.Outcome.Victims[0].Name, "ranked by the sibling's pod on n2")
		})
	}
}

// for any mix of pods — the owner's, other owners' (same name,
// other UID or kind), orphans, in other namespaces, in any state — an
// indexed sync and a listing sync see, adopt and release the same pods.
func TestPropertyIndexedSyncEqualsListedSync(tt *testing.T) {
	rapid.Check(tt, func(t *rapid.T) {
		rs := recRS(int32(rapid.IntRange(0, 4).Draw(t, "replicas")))
		if rapid.Bool().Draw(t, "deleting") {
			now := metav1.NewTime(podtest.Epoch)
			rs.DeletionTimestamp = &now
		}
		n := rapid.IntRange(0, 12).Draw(t, "pods")
		pods := make([]*corev1.Pod, n)
		for i := range pods {
			var opts []podtest.Option
			switch rapid.IntRange(0, 5).Draw(t, "controller") {
			case 0:
				opts = append(opts, controlledBy("ReplicaSet", "web", "uid-web"))
			case 1:
				opts = append(opts, controlledBy("ReplicaSet", "web", "uid-old"))
			case 2:
				opts = append(opts, controlledBy("PodSet", "web", "uid-web"))
			case 3:
				opts = append(opts, controlledBy("ReplicaSet", "db", "uid-db"))
			}
			if rapid.Bool().Draw(t, "matches") {
				opts = append(opts, podtest.Labels(map[string]string{"app": "web"}))
			}
			switch rapid.IntRange(0, 3).Draw(t, "state") {
			case 0:
				opts = append(opts, podtest.Ready(podtest.Epoch))
			case 1:
				opts = append(opts, podtest.Deleting(podtest.Epoch))
			case 2:
				opts = append(opts, podtest.Phase(corev1.PodSucceeded))
			}
			if rapid.IntRange(0, 4).Draw(t, "namespace") == 0 {
				opts = append(opts, podtest.Namespace("elsewhere"))
			}
			pods[i] = podtest.New("p"+strconv.Itoa(i), opts...)
			pods[i].UID = types.UID("pod-" + strconv.Itoa(i))
		}
		run := func(p reconcile.Pods) (reconcile.SyncResult, []patchCall, []string) {
			r := newRecController(tt, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Cluster.Pods = p
			})
			res, err := r.Sync(context.Background(), "default/web")
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			return res, r.patcher.recorded(), r.control.deletes()
		}
		a, aPatches, aDeleted := run(newFleetPods(pods))
		b, bPatches, bDeleted := run(listOnlyPods{&recPodList{pods: pods}})
		assert.ElementsMatch(t, names(a.Active), names(b.Active), "active")
		assert.ElementsMatch(t, names(a.Terminating), names(b.Terminating), "terminating")
		assert.ElementsMatch(t, names(a.Adopted), names(b.Adopted), "adopted")
		assert.ElementsMatch(t, names(a.Released), names(b.Released), "released")
		assert.ElementsMatch(t, aPatches, bPatches, "patches")
		assert.Equal(t, a.Outcome.Expected, b.Outcome.Expected, "expected")
		assert.Equal(t, len(aDeleted), len(bDeleted), "deletes")
	})
}
