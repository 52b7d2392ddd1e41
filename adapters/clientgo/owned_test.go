package clientgo_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

var stamp = map[string]string{"example.com/managed-by": "rs-controller"}

func ownedPod(name string, labels map[string]string) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "u", Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

// PodControl.Labels are stamped on every created pod, never on the
// pod passed in; a template label with another value fails before any call.
func TestPodControlStampsLabels(t *testing.T) {
	cs := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	pc := clientgo.PodControl{Client: cs, Recorder: rec, Labels: stamp}

	pod := ownedPod("a", map[string]string{"app": "web"})
	want := pod.DeepCopy()
	created, err := pc.CreatePod(t.Context(), pod)
	require.NoError(t, err)
	assert.Equal(t, want, pod, "the pod passed in is not modified")
	assert.Equal(t, map[string]string{"app": "web", "example.com/managed-by": "rs-controller"}, created.Labels)
	stored, err := cs.CoreV1().Pods(ns).Get(t.Context(), "a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.Labels, stored.Labels)

	cs.ClearActions()
	_, err = pc.CreatePod(t.Context(), ownedPod("b", map[string]string{"example.com/managed-by": "someone-else"}))
	assert.ErrorContains(t, err, "clientgo: CreatePod:")
	assert.Empty(t, cs.Actions(), "no API call")
	assert.Contains(t, <-rec.Events, "Normal SuccessfulCreate")
	assert.Contains(t, <-rec.Events, "Warning FailedCreate")

	created, err = clientgo.PodControl{Client: cs}.CreatePod(t.Context(), ownedPod("c", map[string]string{"app": "web"}))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "web"}, created.Labels, "no Labels: the template's, as upstream")
}

// a pod factory with OwnedPods lists and watches with the
// stamp's label selector and the finished
// phases left out; with LeanPods its cache holds lean pods.
func TestOwnedPodsAndLeanPods(t *testing.T) {
	labeled, orphan := ownedPod("labeled", map[string]string{"app": "web", "example.com/managed-by": "rs-controller"}), ownedPod("orphan", map[string]string{"app": "web"})
	orphan.OwnerReferences = nil
	cs := fake.NewClientset(labeled, orphan)
	var mu sync.Mutex
	var seen []k8stesting.ListRestrictions
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, a.(k8stesting.ListAction).GetListRestrictions())
		return false, nil, nil
	})
	owned, err := clientgo.OwnedPods(stamp, true)
	require.NoError(t, err)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, owned, informers.WithTransform(clientgo.LeanPods))
	pods := factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown() // after cancel: it waits for the informers to stop
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), pods.HasSynced))

	mu.Lock()
	require.NotEmpty(t, seen)
	assert.Equal(t, "example.com/managed-by=rs-controller", seen[0].Labels.String())
	assert.ElementsMatch(t, []string{"status.phase!=Succeeded", "status.phase!=Failed"}, strings.Split(seen[0].Fields.String(), ","))
	mu.Unlock()
	// The fake clientset filters lists by label (not by field).
	keys := pods.GetStore().ListKeys()
	assert.Equal(t, []string{ns + "/labeled"}, keys, "the unlabeled orphan is never seen")
	got, ok, err := pods.GetStore().GetByKey(ns + "/labeled")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, reconcile.LeanPod(labeled), got, "the cache holds the lean pod")

	none, err := clientgo.OwnedPods(nil, false)
	require.NoError(t, err)
	r := listRestrictions(t, none)
	assert.True(t, r.Labels.Empty() && r.Fields.Empty(), "no labels, no dropFinished: every pod, as upstream")
	r = listRestrictions(t, owned)
	assert.Equal(t, "example.com/managed-by=rs-controller", r.Labels.String())

	_, err = clientgo.OwnedPods(map[string]string{"not a key": "v"}, false)
	assert.ErrorContains(t, err, "clientgo: OwnedPods:")
}

// listRestrictions returns the selectors of the first list a pod informer
// of a factory built with opt sends.
func listRestrictions(t *testing.T, opt informers.SharedInformerOption) k8stesting.ListRestrictions {
	t.Helper()
	cs := fake.NewClientset()
	var mu sync.Mutex
	var got []k8stesting.ListRestrictions
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, a.(k8stesting.ListAction).GetListRestrictions())
		return false, nil, nil
	})
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, opt)
	inf := f.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	return got[0]
}
