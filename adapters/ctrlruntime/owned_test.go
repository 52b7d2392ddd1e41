package ctrlruntime_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const stampKey = "example.com/managed-by"

var stamp = map[string]string{stampKey: "podset"}

// PodControl.Labels are stamped on every created pod, never on the
// pod passed in; a template label with another value fails before any call.
// PodStamp declares them to the Controller.
func TestPodControlStampsLabels(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	rec := record.NewFakeRecorder(10)
	yes := true
	ref := []metav1.OwnerReference{{APIVersion: "demo/v1", Kind: "PodSet", Name: "web", UID: "u", Controller: &yes}}
	pc := ctrlruntime.PodControl{Client: c, Recorder: rec, Labels: stamp}
	assert.Equal(t, stamp, pc.PodStamp(nil), "PodStamp is what CreatePod stamps")
	assert.Nil(t, ctrlruntime.PodControl{Client: c}.PodStamp(nil), "no Labels: no stamp")

	in := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns, Labels: map[string]string{"app": "web"}, OwnerReferences: ref}}
	created, err := pc.CreatePod(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "web"}, in.Labels, "the caller's pod is not modified")
	assert.Equal(t, map[string]string{"app": "web", stampKey: "podset"}, created.Labels)
	var stored corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(created), &stored))
	assert.Equal(t, created.Labels, stored.Labels)

	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns, Labels: map[string]string{stampKey: "other"}, OwnerReferences: ref}}
	_, err = pc.CreatePod(t.Context(), bad)
	assert.ErrorContains(t, err, "ctrlruntime: CreatePod:")
	assert.True(t, apierrors.IsNotFound(c.Get(t.Context(), client.ObjectKeyFromObject(bad), &corev1.Pod{})), "no pod created")
	assert.Contains(t, <-rec.Events, "Normal SuccessfulCreate")
	assert.Contains(t, <-rec.Events, "Warning FailedCreate")
}

// GetPod reads the pod through the API reader; a missing pod is
// NotFound; without an API reader there is no live read
// (errors.ErrUnsupported), and the Client, a cache, is never read instead.
func TestPodControlGetPod(t *testing.T) {
	live := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(pod("a", "uid-a")).Build()
	cached := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	pc := ctrlruntime.PodControl{Client: cached, APIReader: live}
	got, err := pc.GetPod(t.Context(), ns, "a")
	require.NoError(t, err)
	assert.Equal(t, "uid-a", string(got.UID), "read through the API reader, not the Client")

	_, err = pc.GetPod(t.Context(), ns, "gone")
	require.Error(t, err)
	assert.True(t, apierrors.IsNotFound(err), "a missing pod is NotFound: %v", err)

	pc.APIReader = nil
	_, err = pc.GetPod(t.Context(), ns, "a")
	require.Error(t, err)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.ErrorContains(t, err, "ctrlruntime: GetPod:")
	assert.False(t, apierrors.IsNotFound(err))
}

// CacheOptions gives the pod cache the stamp's label
// selector and, with dropFinished, a field selector leaving finished pods
// out; it keeps the pod entry's other settings and ANDs the selectors the
// options already applied to pods; LeanPods is a separate choice.
func TestOwnedPods(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	assert.Equal(t, stamp, owned.Labels())
	got, err := owned.CacheOptions(cache.Options{})
	require.NoError(t, err)
	b := podEntry(t, got)
	assert.Equal(t, stampKey+"=podset", b.Label.String())
	assert.True(t, b.Label.Matches(labels.Set{stampKey: "podset", "app": "web"}))
	assert.False(t, b.Label.Matches(labels.Set{"app": "web"}), "an unlabeled orphan is never seen")
	for phase, kept := range map[corev1.PodPhase]bool{corev1.PodPending: true, corev1.PodRunning: true, corev1.PodSucceeded: false, corev1.PodFailed: false} {
		assert.Equal(t, kept, b.Field.Matches(fields.Set{"status.phase": string(phase)}), "phase %s", phase)
	}
	assert.Nil(t, b.Transform, "LeanPods is a separate choice")

	// The pod entry's Transform stays; -namespace's default field selector
	// and a default label selector the stamp meets are ANDed in; the
	// entries of other types and the map passed in are left alone.
	teamStamp := map[string]string{stampKey: "podset", "team": "a"}
	teamOwned, err := ctrlruntime.NewOwnedPods(teamStamp, true)
	require.NoError(t, err)
	onlyNS := fields.OneTermEqualSelector("metadata.namespace", ns)
	team := labels.SelectorFromSet(labels.Set{"team": "a"})
	in := cache.Options{
		DefaultLabelSelector: team,
		DefaultFieldSelector: onlyNS,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:        {Transform: ctrlruntime.LeanPods},
			&appsv1.ReplicaSet{}: {Label: team},
		},
	}
	got, err = teamOwned.CacheOptions(in)
	require.NoError(t, err)
	b = podEntry(t, got)
	assert.NotNil(t, b.Transform, "the entry's Transform is kept")
	assert.Equal(t, stampKey+"=podset,team=a", b.Label.String())
	assert.True(t, b.Field.Matches(fields.Set{"status.phase": "Running", "metadata.namespace": ns}))
	assert.False(t, b.Field.Matches(fields.Set{"status.phase": "Running", "metadata.namespace": "other"}), "-namespace still holds")
	assert.False(t, b.Field.Matches(fields.Set{"status.phase": "Failed", "metadata.namespace": ns}))
	assert.Len(t, got.ByObject, 2)
	assert.Len(t, in.ByObject, 2)
	for obj, e := range in.ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			assert.Nil(t, e.Label, "the options passed in are not modified")
		}
	}
	assert.Equal(t, team, got.DefaultLabelSelector, "the defaults stay for other types")

	// The zero OwnedPods restricts nothing.
	zero, err := ctrlruntime.NewOwnedPods(nil, false)
	require.NoError(t, err)
	assert.Equal(t, ctrlruntime.OwnedPods{}, zero)
	assert.Nil(t, zero.Labels())
	got, err = zero.CacheOptions(cache.Options{DefaultFieldSelector: onlyNS})
	require.NoError(t, err)
	assert.Empty(t, got.ByObject)

	_, err = ctrlruntime.NewOwnedPods(map[string]string{"not a key": "v"}, false)
	assert.ErrorContains(t, err, "ctrlruntime: NewOwnedPods:")
}

// Issue 40: a pod cache filter the stamp does not meet hides every pod the
// controller creates, and it creates them again on every sync (60 pods
// after 20 syncs for replicas 3). CacheOptions refuses it, once, with an
// error naming the selector and the stamp: a default label selector, a
// pod entry's own, and, for the zero OwnedPods (no stamp), any selector
// that needs a label.
func TestOwnedPodsCacheOptionsRefusesAFilterTheStampDoesNotMeet(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(stamp, false)
	require.NoError(t, err)
	team := labels.SelectorFromSet(labels.Set{"team": "a"})
	notStamped, err := labels.Parse(stampKey + "!=podset")
	require.NoError(t, err)
	for name, c := range map[string]struct {
		owned ctrlruntime.OwnedPods
		opts  cache.Options
		want  string
	}{
		"default label selector": {owned, cache.Options{DefaultLabelSelector: team}, `"team=a" (cache.Options.DefaultLabelSelector)`},
		"pod entry's selector": {owned, cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: notStamped}}},
			`"example.com/managed-by!=podset" (cache.Options.ByObject[&corev1.Pod{}].Label)`},
		"no stamp": {ctrlruntime.OwnedPods{}, cache.Options{DefaultLabelSelector: team}, `the labels the pod client stamps ("")`},
		"two pod entries": {owned, cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {}, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}: {}}},
			"two entries for pods"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := c.owned.CacheOptions(c.opts)
			require.Error(t, err)
			assert.ErrorContains(t, err, "ctrlruntime: OwnedPods.CacheOptions:")
			assert.ErrorContains(t, err, c.want)
			assert.Equal(t, c.opts, got, "the options come back unchanged")
		})
	}
	// A selector the stamp meets is no conflict.
	notCanary, err := labels.Parse("!canary")
	require.NoError(t, err)
	_, err = owned.CacheOptions(cache.Options{DefaultLabelSelector: notCanary})
	assert.NoError(t, err)
}

// The manager's cache built from CacheOptions lists and watches pods with
// the stamp's selectors: controller-runtime takes the pod entry for what
// it is (observed on the requests it sends to an API server).
func TestOwnedPodsCacheListsWithTheStamp(t *testing.T) {
	var mu sync.Mutex
	var queries []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/pods" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		queries = append(queries, r.URL.Query())
		mu.Unlock()
		if r.URL.Query().Get("watch") == "true" {
			<-r.Context().Done() // a watch that delivers nothing
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
	}))
	defer srv.Close()
	owned, err := ctrlruntime.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	opts, err := owned.CacheOptions(cache.Options{})
	require.NoError(t, err)
	opts.Scheme, opts.Mapper = scheme(t), mapper()
	c, err := cache.New(&rest.Config{Host: srv.URL}, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(ctx) }()
	defer func() { cancel(); <-done }()
	// Not blocking until synced: the fake server's watch delivers nothing,
	// and client-go v0.37's informer lists through that watch
	// (WatchListClient), so it would never sync.
	_, err = c.GetInformer(ctx, &corev1.Pod{}, cache.BlockUntilSynced(false))
	require.NoError(t, err)
	var first url.Values
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && first == nil; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		if len(queries) > 0 {
			first = queries[0]
		}
		mu.Unlock()
	}
	require.NotNil(t, first, "the pod informer sent no request")
	assert.Equal(t, stampKey+"=podset", first.Get("labelSelector"))
	sel, err := fields.ParseSelector(first.Get("fieldSelector"))
	require.NoError(t, err)
	assert.False(t, sel.Matches(fields.Set{"status.phase": "Succeeded"}))
	assert.True(t, sel.Matches(fields.Set{"status.phase": "Running"}))
}

// podEntry returns the ByObject entry of opts for pods.
func podEntry(t *testing.T, opts cache.Options) cache.ByObject {
	t.Helper()
	for obj, b := range opts.ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			return b
		}
	}
	t.Fatal("no ByObject entry for pods")
	return cache.ByObject{}
}

// issue 40: an owner whose selector excludes the labels the pod
// client stamps (DoesNotExist on the stamp's key, or NotIn its value)
// would release every pod it creates and create it again without end
// (60 pods after 20 syncs for replicas 3 before). On ctrlruntimetest, with
// the pod client's stamp from ConfigOptions.OwnedPods, no pod is created
// and every reconcile of the owner is terminal.
func TestSelectorExcludingTheStampIsTerminal(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(stamp, false)
	require.NoError(t, err)
	for name, excluding := range map[string]metav1.LabelSelectorRequirement{
		"DoesNotExist": {Key: stampKey, Operator: metav1.LabelSelectorOpDoesNotExist},
		"NotIn":        {Key: stampKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"podset"}},
	} {
		t.Run(name, func(t *testing.T) {
			replicas := int32(3)
			labels := map[string]string{"app": "web"}
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: labels, MatchExpressions: []metav1.LabelSelectorRequirement{excluding}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}},
				},
			}
			env, err := ctrlruntimetest.New(func(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
				cfg.Describe = reconcile.ReplicaSets().Describe
				cfg.Status = reconcile.ReplicaSets().Status
				return reconcile.NewController(cfg)
			}, ctrlruntimetest.Options{Objects: []client.Object{rs}, Config: ctrlruntime.ConfigOptions{OwnedPods: owned}})
			require.NoError(t, err)
			for range 5 {
				err := env.Settle()
				require.Error(t, err)
				assert.ErrorIs(t, err, reconcile.ErrTerminal)
				env.Enqueue(ns + "/web")
			}
			for range 3 {
				_, err := env.Reconcile(ns + "/web")
				assert.ErrorIs(t, err, reconcile.ErrTerminal)
			}
			pods, err := env.Pods(ns)
			require.NoError(t, err)
			assert.Empty(t, pods, "no pod created")
			var got appsv1.ReplicaSet
			require.NoError(t, env.Client.Get(t.Context(), client.ObjectKeyFromObject(rs), &got))
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
