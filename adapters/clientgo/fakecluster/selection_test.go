package fakecluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
)

const owned = "owned=yes"

func labelled(name, value string) *corev1.Pod {
	p := pod(name, "")
	p.Labels = map[string]string{"owned": value}
	return p
}

// relabel sets name's "owned" label to value.
func relabel(t *testing.T, c *fakecluster.Cluster, name, value string) {
	t.Helper()
	pods := c.Clientset.CoreV1().Pods(ns)
	p, err := pods.Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	p.Labels["owned"] = value
	_, err = pods.Update(t.Context(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// seen is one watch event as the test compares it: type, pod name and the
// pod's "owned" label.
type seen struct {
	typ   watch.EventType
	name  string
	owned string
}

// A watch with a label selector sends what an API server's sends (the
// rules of the selection type): ADDED when a pod comes to match, MODIFIED
// while it matches, DELETED, with the labels it matched with, when it
// stops matching or is removed, and nothing about a pod that does not
// match. Both ways a watch starts: live, from the latest version, and
// replayed, from a version older than the writes (the history's recorded
// prior states). Before, the watch sent every event of every pod.
func TestWatchHonoursLabelSelector(t *testing.T) {
	want := []seen{
		{watch.Added, "d", "yes"},    // created matching
		{watch.Deleted, "a", "yes"},  // relabelled away: deleted, as it matched
		{watch.Added, "b", "yes"},    // relabelled in
		{watch.Modified, "d", "yes"}, // an update of a matching pod
		{watch.Modified, "d", "yes"}, // the removal's deletionTimestamp
		{watch.Deleted, "d", "yes"},  // removed
		{watch.Added, "end", "yes"},
	}
	writes := func(t *testing.T, c *fakecluster.Cluster) {
		pods := c.Clientset.CoreV1().Pods(ns)
		for _, p := range []*corev1.Pod{labelled("c", "no"), labelled("d", "yes")} {
			_, err := pods.Create(t.Context(), p, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		relabel(t, c, "c", "maybe") // never matches: nothing
		relabel(t, c, "a", "no")
		relabel(t, c, "b", "yes")
		d, err := pods.Get(t.Context(), "d", metav1.GetOptions{})
		require.NoError(t, err)
		d.Annotations = map[string]string{"touched": "1"}
		_, err = pods.Update(t.Context(), d, metav1.UpdateOptions{})
		require.NoError(t, err)
		require.NoError(t, pods.Delete(t.Context(), "d", metav1.DeleteOptions{}))
		require.NoError(t, pods.Delete(t.Context(), "c", metav1.DeleteOptions{}))
		_, err = pods.Create(t.Context(), labelled("end", "yes"), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, replayed := range []bool{false, true} {
		t.Run(map[bool]string{false: "live", true: "replayed"}[replayed], func(t *testing.T) {
			c := fakecluster.New(1, fakecluster.Faults{})
			pods := c.Clientset.CoreV1().Pods(ns)
			for _, p := range []*corev1.Pod{labelled("a", "yes"), labelled("b", "no")} {
				_, err := pods.Create(t.Context(), p, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			list, err := pods.List(t.Context(), metav1.ListOptions{LabelSelector: owned})
			require.NoError(t, err)
			require.Len(t, list.Items, 1, "the list selects by label")
			watchFrom := func() watch.Interface {
				w, err := pods.Watch(t.Context(), metav1.ListOptions{LabelSelector: owned, ResourceVersion: list.ResourceVersion})
				require.NoError(t, err)
				return w
			}
			var w watch.Interface
			if replayed {
				writes(t, c)
				w = watchFrom()
			} else {
				w = watchFrom()
				writes(t, c)
			}
			defer w.Stop()
			var got []seen
			for len(got) == 0 || got[len(got)-1].name != "end" {
				e := <-w.ResultChan()
				p := e.Object.(*corev1.Pod)
				got = append(got, seen{e.Type, p.Name, p.Labels["owned"]})
			}
			assert.Equal(t, want, got)
		})
	}
}

// The relabelled pod's DELETED event carries the version of the write
// that made it leave, so the watcher's resourceVersion moves forward.
func TestWatchLeavingCarriesTheWritesVersion(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	pods := c.Clientset.CoreV1().Pods(ns)
	_, err := pods.Create(t.Context(), labelled("a", "yes"), metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := pods.List(t.Context(), metav1.ListOptions{LabelSelector: owned})
	require.NoError(t, err)
	w, err := pods.Watch(t.Context(), metav1.ListOptions{LabelSelector: owned, ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	relabel(t, c, "a", "no")
	stored, err := pods.Get(t.Context(), "a", metav1.GetOptions{})
	require.NoError(t, err)
	e := <-w.ResultChan()
	require.Equal(t, watch.Deleted, e.Type)
	left := e.Object.(*corev1.Pod)
	assert.Equal(t, "yes", left.Labels["owned"], "the pod as it last matched")
	assert.Equal(t, stored.ResourceVersion, left.ResourceVersion, "the relabelling write's version")
}

// An owned-only informer (a label-selected list and watch, what
// clientgo.NewOwnedPods' Factory builds) on the cluster never holds or
// hears of a pod its selector excludes, and drops a pod whose labels stop
// matching, through a delete event, as on a real API server.
func TestLabelSelectedInformer(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	pods := c.Clientset.CoreV1().Pods(ns)
	for _, p := range []*corev1.Pod{labelled("a", "yes"), labelled("b", "no")} {
		_, err := pods.Create(t.Context(), p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = owned }))
	inf := factory.Core().V1().Pods().Informer()
	// The handler reports a pod the selector excludes and every delete.
	heard := make(chan string, 16)
	notOwned := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Labels["owned"] != "yes" {
			heard <- "not owned: " + p.Name
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notOwned,
		UpdateFunc: func(_, cur any) { notOwned(cur) },
		DeleteFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				heard <- "deleted: " + p.Name
			}
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	factory.Start(ctx.Done())
	defer factory.Shutdown() // after cancel: it waits for the informers to stop
	defer cancel()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))

	for _, p := range []*corev1.Pod{labelled("c", "no"), labelled("d", "yes")} {
		_, err := pods.Create(t.Context(), p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	relabel(t, c, "b", "maybe")
	relabel(t, c, "a", "no")
	assert.Equal(t, "deleted: a", <-heard, "nothing about pods the selector excludes; a pod whose labels stop matching is deleted")
	var names []string
	for _, obj := range inf.GetStore().List() {
		names = append(names, obj.(*corev1.Pod).Name)
	}
	assert.Equal(t, []string{"d"}, names)
}
