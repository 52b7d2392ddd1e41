package podops

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations/perpod"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const group = "example.com/group"

var (
	modelKeys    = []string{"ns/c/a", "ns/c/b", "ns/d/a"}
	modelPodKeys = []string{"ns/p0", "ns/p1", "ns/p2"}
)

// drawPod draws a pod of the model: one of three names, controlled by c,
// d or nobody, in group a, b or none, at one of three resourceVersions,
// terminating or not.
func drawPod(t *rapid.T, label string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       "ns",
		Name:            rapid.SampledFrom([]string{"p0", "p1", "p2"}).Draw(t, label+"Name"),
		ResourceVersion: rapid.SampledFrom([]string{"1", "2", "3"}).Draw(t, label+"RV"),
	}}
	if g := rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, label+"Group"); g != "" {
		p.Labels = map[string]string{group: g}
	}
	if owner := rapid.SampledFrom([]string{"", "c", "d"}).Draw(t, label+"Owner"); owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "Cluster", Name: owner, Controller: new(true)}}
	}
	if rapid.Bool().Draw(t, label+"Deleting") {
		p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	return p
}

// model is what each key still expects: pod key sets, as the Tracker's
// key-tracked creations and deletions.
type model struct{ creations, deletions map[string]map[string]bool }

// settle removes podKey from each of keys' sets.
func settle(sets map[string]map[string]bool, keys []string, podKey string) {
	for _, k := range keys {
		delete(sets[k], podKey)
	}
}

func sorted(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

// The Observer, over any sequence of add, update and delete events,
// leaves exactly the pod keys the rules leave: an add
// of a live pod settles its creation under its keys, a delete, an add of a
// terminating pod and an update (not a resync) to a terminating pod settle
// its deletion under its keys (an update: the new pod's keys, and the old
// one's when the labels changed), and nothing else settles anything.
func TestObserverModel(t *testing.T) {
	keysOf := perpod.KeysByOwner("Cluster", group)
	rapid.Check(t, func(t *rapid.T) {
		var tr perpod.Tracker
		m := model{creations: map[string]map[string]bool{}, deletions: map[string]map[string]bool{}}
		for _, k := range modelKeys {
			m.creations[k], m.deletions[k] = map[string]bool{}, map[string]bool{}
			for _, pk := range modelPodKeys {
				if rapid.Bool().Draw(t, "expectCreation") {
					tr.ExpectCreation(k, pk)
					m.creations[k][pk] = true
				}
				if rapid.Bool().Draw(t, "expectDeletion") {
					tr.ExpectDeletion(k, pk)
					m.deletions[k][pk] = true
				}
			}
		}
		o := Observer{Tracker: &tr, Keys: keysOf}
		for range rapid.IntRange(1, 12).Draw(t, "events") {
			switch rapid.SampledFrom([]string{"add", "update", "delete"}).Draw(t, "event") {
			case "add":
				p := drawPod(t, "pod")
				o.Added(p)
				if p.DeletionTimestamp == nil {
					settle(m.creations, keysOf(p), reconcile.PodKey(p))
				} else {
					settle(m.deletions, keysOf(p), reconcile.PodKey(p))
				}
			case "update":
				old, cur := drawPod(t, "old"), drawPod(t, "cur")
				cur.Name = old.Name // an update is of one pod
				o.Updated(old, cur)
				if cur.DeletionTimestamp != nil && old.ResourceVersion != cur.ResourceVersion {
					settle(m.deletions, keysOf(cur), reconcile.PodKey(cur))
					if !maps.Equal(old.Labels, cur.Labels) || (old.Labels == nil) != (cur.Labels == nil) {
						settle(m.deletions, keysOf(old), reconcile.PodKey(old))
					}
				}
			case "delete":
				p := drawPod(t, "pod")
				o.Deleted(p)
				settle(m.deletions, keysOf(p), reconcile.PodKey(p))
			}
			for _, k := range modelKeys {
				creations, deletions := tr.Pending(k)
				require.Equal(t, sorted(m.creations[k]), creations, "creations of %s", k)
				require.Equal(t, sorted(m.deletions[k]), deletions, "deletions of %s", k)
			}
		}
	})
}

func TestSplitPodKey(t *testing.T) {
	for _, tc := range []struct{ key, namespace, name string }{
		{"ns/p", "ns", "p"},
		{"/p", "", "p"},
		{"p", "", "p"},
	} {
		namespace, name, err := SplitPodKey(tc.key)
		require.NoError(t, err, tc.key)
		assert.Equal(t, [2]string{tc.namespace, tc.name}, [2]string{namespace, name}, tc.key)
	}
	for _, key := range []string{"", "/", "ns/", "a/b/c"} {
		_, _, err := SplitPodKey(key)
		assert.ErrorContains(t, err, "malformed pod key", key)
	}
}
