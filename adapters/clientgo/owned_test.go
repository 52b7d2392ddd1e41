package clientgo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const stampKey = "example.com/managed-by"

var stamp = map[string]string{stampKey: "rs-controller"}

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
// PodStamp declares them to the Controller.
func TestPodControlStampsLabels(t *testing.T) {
	cs := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	pc := clientgo.PodControl{Client: cs, Recorder: rec, Labels: stamp}
	assert.Equal(t, stamp, pc.PodStamp(nil), "PodStamp is what CreatePod stamps")

	pod := ownedPod("a", map[string]string{"app": "web"})
	want := pod.DeepCopy()
	created, err := pc.CreatePod(t.Context(), pod)
	require.NoError(t, err)
	assert.Equal(t, want, pod, "the pod passed in is not modified")
	assert.Equal(t, map[string]string{"app": "web", stampKey: "rs-controller"}, created.Labels)
	stored, err := cs.CoreV1().Pods(ns).Get(t.Context(), "a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.Labels, stored.Labels)

	cs.ClearActions()
	_, err = pc.CreatePod(t.Context(), ownedPod("b", map[string]string{stampKey: "someone-else"}))
	assert.ErrorContains(t, err, "clientgo: CreatePod:")
	assert.Empty(t, cs.Actions(), "no API call")
	assert.Contains(t, <-rec.Events, "Normal SuccessfulCreate")
	assert.Contains(t, <-rec.Events, "Warning FailedCreate")

	plain := clientgo.PodControl{Client: cs}
	created, err = plain.CreatePod(t.Context(), ownedPod("c", map[string]string{"app": "web"}))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "web"}, created.Labels, "no Labels: the template's, as upstream")
	assert.Nil(t, plain.PodStamp(nil), "no Labels: no stamp")
}

// GetPod reads the pod from the API server; a missing pod is
// NotFound, as the Controller's check of a pod that left its cache needs.
func TestPodControlGetPod(t *testing.T) {
	pod := ownedPod("a", stamp)
	cs := fake.NewClientset(pod)
	pc := clientgo.PodControl{Client: cs}
	got, err := pc.GetPod(t.Context(), ns, "a")
	require.NoError(t, err)
	assert.Equal(t, pod.Labels, got.Labels)
	assert.Equal(t, "a", got.Name)

	_, err = pc.GetPod(t.Context(), ns, "gone")
	require.Error(t, err)
	assert.True(t, apierrors.IsNotFound(err), "a missing pod is NotFound: %v", err)
	assert.False(t, errors.Is(err, errors.ErrUnsupported))
}

// a pod factory from OwnedPods lists and watches with the
// stamp's label selector and the finished phases left out; with LeanPods
// its cache holds lean pods. Labels gives the same stamp, for PodControl.
func TestOwnedPodsAndLeanPods(t *testing.T) {
	labeled, orphan := ownedPod("labeled", map[string]string{"app": "web", stampKey: "rs-controller"}), ownedPod("orphan", map[string]string{"app": "web"})
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
	owned, err := clientgo.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	assert.Equal(t, stamp, owned.Labels())
	factory := owned.Factory(cs, 0, informers.WithTransform(clientgo.LeanPods))
	pods := factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown() // after cancel: it waits for the informers to stop
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), pods.HasSynced))

	mu.Lock()
	require.NotEmpty(t, seen)
	assert.Equal(t, stampKey+"=rs-controller", seen[0].Labels.String())
	assert.ElementsMatch(t, []string{"status.phase!=Succeeded", "status.phase!=Failed"}, strings.Split(seen[0].Fields.String(), ","))
	mu.Unlock()
	// The fake clientset filters lists by label (not by field).
	keys := pods.GetStore().ListKeys()
	assert.Equal(t, []string{ns + "/labeled"}, keys, "the unlabeled orphan is never seen")
	got, ok, err := pods.GetStore().GetByKey(ns + "/labeled")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, reconcile.LeanPod(labeled), got, "the cache holds the lean pod")

	none, err := clientgo.NewOwnedPods(nil, false)
	require.NoError(t, err)
	assert.Equal(t, clientgo.OwnedPods{}, none, "no labels, no dropFinished: the zero OwnedPods")
	assert.Nil(t, none.Labels())
	r := listRestrictions(t, none)
	assert.True(t, r.Labels.Empty() && r.Fields.Empty(), "no labels, no dropFinished: every pod, as upstream")
	r = listRestrictions(t, clientgo.OwnedPods{})
	assert.True(t, r.Labels.Empty() && r.Fields.Empty(), "the zero OwnedPods: every pod, as upstream")
	r = listRestrictions(t, owned)
	assert.Equal(t, stampKey+"=rs-controller", r.Labels.String())

	_, err = clientgo.NewOwnedPods(map[string]string{"not a key": "v"}, false)
	assert.ErrorContains(t, err, "clientgo: NewOwnedPods:")
}

// Issue 40: the pod cache's selection and the stamp come from one value,
// and nothing else can change the selection: a list-options tweak given
// to Factory (here one selecting pods the stamp does not carry, which
// would hide every created pod from the controller) has no effect, and
// neither the labels given to NewOwnedPods nor those Labels returns alias
// the value's own. (A client-go factory's list options cannot be read, so
// there is no filter left for the package to refuse.)
func TestOwnedPodsCannotDisagree(t *testing.T) {
	in := map[string]string{stampKey: "rs-controller"}
	owned, err := clientgo.NewOwnedPods(in, false)
	require.NoError(t, err)
	in[stampKey] = "changed"
	assert.Equal(t, stamp, owned.Labels(), "NewOwnedPods copies its labels")
	out := owned.Labels()
	out[stampKey] = "changed"
	assert.Equal(t, stamp, owned.Labels(), "Labels returns a copy")

	hiding := informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = stampKey + "!=rs-controller"
		o.FieldSelector = "spec.nodeName=n1"
	})
	r := listRestrictions(t, owned, hiding)
	assert.Equal(t, stampKey+"=rs-controller", r.Labels.String(), "the stamp's selector, not the tweak's")
	assert.True(t, r.Fields.Empty(), "no field selector without dropFinished")
}

// listRestrictions returns the selectors of the first list a pod informer
// of owned's factory (with options) sends.
func listRestrictions(t *testing.T, owned clientgo.OwnedPods, options ...informers.SharedInformerOption) k8stesting.ListRestrictions {
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
	f := owned.Factory(cs, 0, options...)
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

// ownedReplicaSets is the ReplicaSet Config of the OwnedPods example: the
// ReplicaSets from factory, the pods from pods, made by an OwnedPods'
// Factory, whose labels NewConfig stamps.
func ownedReplicaSets(t *testing.T, client kubernetes.Interface, factory, pods informers.SharedInformerFactory) reconcile.Config[*appsv1.ReplicaSet] {
	t.Helper()
	cfg, err := clientgo.NewConfig(client, pods, clientgo.ReplicaSetKind(client, factory), clientgo.ConfigOptions{})
	require.NoError(t, err)
	upstream := reconcile.ReplicaSets()
	cfg.Describe, cfg.Status = upstream.Describe, upstream.Status
	return cfg
}

// issue 40: an owner whose selector excludes the labels the pod
// client stamps (DoesNotExist on the stamp's key, or NotIn its value)
// would release every pod it creates and create it again without end
// (60 pods after 20 syncs for replicas 3 before). On the fake cluster,
// with the owned-pods wiring, no pod is created and every sync of the
// owner that acts is terminal (a sync the consistency gate defers until
// the cache has the condition's write is not an action).
func TestSelectorExcludingTheStampIsTerminal(t *testing.T) {
	for name, excluding := range map[string]metav1.LabelSelectorRequirement{
		"DoesNotExist": {Key: stampKey, Operator: metav1.LabelSelectorOpDoesNotExist},
		"NotIn":        {Key: stampKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"rs-controller"}},
	} {
		t.Run(name, func(t *testing.T) {
			cl := fakecluster.New(1, fakecluster.Faults{})
			owned, err := clientgo.NewOwnedPods(stamp, true)
			require.NoError(t, err)
			factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
			podFactory := owned.Factory(cl.Clientset, 0)
			ctrl, err := reconcile.NewController(ownedReplicaSets(t, cl.Clientset, factory, podFactory))
			require.NoError(t, err)
			q := newCountingQueue()
			pods, replicaSets := podFactory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
			require.NoError(t, clientgo.Register(ctrl, pods, replicaSets, q))
			var mu sync.Mutex
			var errs []error
			w := clientgo.Worker{Queue: q, Sync: ctrl.Sync, Synced: []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced},
				Done: func(_ string, _ reconcile.SyncResult, err error) {
					mu.Lock()
					defer mu.Unlock()
					errs = append(errs, err)
				}}
			ctx, cancel := context.WithCancel(t.Context())
			factory.Start(ctx.Done())
			podFactory.Start(ctx.Done())
			stopped := make(chan struct{})
			go func() { defer close(stopped); assert.NoError(t, w.Run(ctx, 2)) }()

			rs := replicaSet("web", 3)
			rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{excluding}
			_, err = cl.Clientset.AppsV1().ReplicaSets(ns).Create(t.Context(), rs, metav1.CreateOptions{})
			require.NoError(t, err)
			// A few syncs: the create's event, the condition's write, and
			// two more asked for by hand.
			syncs := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(errs)
			}
			runaway := func() bool { return cl.Stats().PodsCreated > 0 }
			eventually(t, func() bool { return runaway() || syncs() >= 1 }, "the first sync")
			q.Add(ns + "/web")
			eventually(t, func() bool { return runaway() || syncs() >= 2 }, "a second sync")
			q.Add(ns + "/web")
			eventually(t, func() bool { return runaway() || syncs() >= 3 && q.Len() == 0 }, "a third sync")
			cancel()
			<-stopped
			factory.Shutdown()
			podFactory.Shutdown()

			assert.Zero(t, cl.Stats().PodsCreated, "no pod created")
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, errs)
			terminal := 0
			for _, err := range errs {
				if errors.Is(err, reconcile.ErrDeferred) {
					// The consistency gate held a sync while the ReplicaSet
					// cache had not reached the condition's status write
					// not an action, retried.
					continue
				}
				assert.ErrorIs(t, err, reconcile.ErrTerminal)
				terminal++
			}
			assert.NotZero(t, terminal, "a sync that acted found the spec invalid")
			got, err := cl.Clientset.AppsV1().ReplicaSets(ns).Get(t.Context(), "web", metav1.GetOptions{})
			require.NoError(t, err)
			var cond *appsv1.ReplicaSetCondition
			for i := range got.Status.Conditions {
				if got.Status.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
					cond = &got.Status.Conditions[i]
				}
			}
			if assert.NotNil(t, cond, "the ReplicaFailure condition") {
				assert.Contains(t, cond.Message, stampKey, "the message names the stamp")
			}
		})
	}
}
