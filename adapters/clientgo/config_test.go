package clientgo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// webAppEnv is a running WebApp controller built by NewConfig: the pods
// on a fake cluster, the WebApps on webApps.
type webAppEnv struct {
	cluster *fakecluster.Cluster
	apps    *webApps
	pods    cache.SharedIndexInformer
	cfg     reconcile.Config[*WebApp]
}

// startWebApps runs a WebApp controller with 2 workers until the test
// ends; podFactory(client) gives the pods' informer factory.
func startWebApps(t *testing.T, podFactory func(kubernetes.Interface) informers.SharedInformerFactory, opts clientgo.ConfigOptions) *webAppEnv {
	t.Helper()
	e := &webAppEnv{cluster: fakecluster.New(1, fakecluster.Faults{}), apps: newWebApps()}
	pods := podFactory(e.cluster.Clientset)
	owners := e.apps.Informer()
	cfg, err := clientgo.NewConfig(e.cluster.Clientset, pods, e.apps.Kind(owners), opts)
	require.NoError(t, err)
	e.cfg = webAppLogic(cfg)
	ctrl, err := reconcile.NewController(e.cfg)
	require.NoError(t, err)
	e.pods = pods.Core().V1().Pods().Informer()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	require.NoError(t, clientgo.Register(ctrl, e.pods, owners, q))

	ctx, cancel := context.WithCancel(context.Background())
	pods.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { owners.Run(ctx.Done()) })
	wg.Go(func() {
		w := clientgo.Worker{Queue: q, Sync: ctrl.Sync, Synced: []cache.InformerSynced{e.pods.HasSynced, owners.HasSynced}}
		assert.NoError(t, w.Run(ctx, 2))
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		pods.Shutdown()
		e.apps.source.Shutdown()
	})
	return e
}

// podsOf lists the fake cluster's pods that a label selector selects
// ("": every pod), the terminating ones left out.
func (e *webAppEnv) podsOf(t *testing.T, selector string) []corev1.Pod {
	t.Helper()
	list, err := e.cluster.Clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// plainFactory is the informer factory a controller shares, every pod
// selected.
func plainFactory(client kubernetes.Interface) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactory(client, 0)
}

// A custom resource on client-go with no hand wiring: NewConfig builds the
// whole Cluster from its Kind, and the controller scales its pods up and
// down on the fake cluster, each pod controlled by its
// WebApp, the status written through the generic StatusWriter.
func TestNewConfigCustomResource(t *testing.T) {
	e := startWebApps(t, plainFactory, clientgo.ConfigOptions{})
	app := e.apps.Create(webApp("web", 3))

	eventually(t, func() bool { return len(e.podsOf(t, "app=web")) == 3 }, "3 pods")
	for _, p := range e.podsOf(t, "app=web") {
		ref := metav1.GetControllerOf(&p)
		require.NotNil(t, ref)
		assert.Equal(t, "example.com/v1", ref.APIVersion)
		assert.Equal(t, "WebApp", ref.Kind)
		assert.Equal(t, app.UID, ref.UID)
	}
	eventually(t, func() bool {
		got, _ := e.apps.Get(ns, "web")
		return got.Status.Replicas == 3
	}, "the status counts 3 pods")

	e.apps.Scale(ns, "web", 1)
	eventually(t, func() bool { return len(e.podsOf(t, "app=web")) == 1 }, "1 pod after the scale-down")
	eventually(t, func() bool {
		got, _ := e.apps.Get(ns, "web")
		return got.Status.Replicas == 1
	}, "the status counts 1 pod")
}

// What NewConfig fills, for a custom resource: every part of the Cluster
// NewController requires (R-14.8's guard among them), the Kind, the
// Resource, and the breaker's Warning event hook when there is a
// recorder.
func TestNewConfigFills(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	apps := newWebApps()
	cfg, err := clientgo.NewConfig(cl.Clientset, plainFactory(cl.Clientset), apps.Kind(apps.Informer()),
		clientgo.ConfigOptions{Recorder: record.NewFakeRecorder(10), EventPerBatch: true})
	require.NoError(t, err)
	assert.Equal(t, webAppGVK, cfg.Kind)
	assert.Equal(t, webAppResource, cfg.Cluster.Resource)
	assert.NotNil(t, cfg.Cluster.CacheVersions.Pods)
	assert.NotNil(t, cfg.Cluster.CacheVersions.Owners)
	require.NotNil(t, cfg.Cluster.CachesSynced)
	assert.False(t, cfg.Cluster.CachesSynced(), "R-14.8: nothing has synced before the informers start")
	assert.NotNil(t, cfg.Hooks.CreationsStopped)
	pc, ok := cfg.Cluster.PodClient.(clientgo.PodControl)
	require.True(t, ok)
	assert.True(t, pc.EventPerBatch)
	assert.Nil(t, pc.Labels, "a shared factory: nothing stamped, as upstream")
	assert.False(t, cfg.Expectations.Exact, "the zero options stay upstream's")
	assert.Zero(t, cfg.StatusInterval)
	assert.False(t, cfg.DisableConsistencyGate)
	_, err = reconcile.NewController(webAppLogic(cfg))
	require.NoError(t, err)
}

// the pods' factory made by OwnedPods.Factory gives the
// PodControl its stamp, so the stamp and the informer's selection come
// from one value.
func TestNewConfigStampsFromOwnedFactory(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	owned, err := clientgo.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	apps := newWebApps()
	cfg, err := clientgo.NewConfig(cl.Clientset, owned.Factory(cl.Clientset, 0), apps.Kind(apps.Informer()), clientgo.ConfigOptions{})
	require.NoError(t, err)
	pc, ok := cfg.Cluster.PodClient.(clientgo.PodControl)
	require.True(t, ok)
	assert.Equal(t, stamp, pc.Labels)
	assert.Equal(t, stamp, pc.PodStamp(nil))
}

// noStatus is an owner type without a Status field.
type noStatus struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (in *noStatus) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// NewConfig refuses what it cannot build, naming it, before anything is
// built.
func TestNewConfigRefusals(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	apps := newWebApps()
	kind := apps.Kind(apps.Informer())
	without := func(change func(*clientgo.Kind[*WebApp])) clientgo.Kind[*WebApp] {
		k := kind
		change(&k)
		return k
	}
	for _, tc := range []struct {
		name    string
		client  kubernetes.Interface
		pods    informers.SharedInformerFactory
		kind    clientgo.Kind[*WebApp]
		wantErr string
	}{
		{"nil client", nil, plainFactory(cl.Clientset), kind, "a nil client"},
		{"nil pod factory", cl.Clientset, nil, kind, "a nil pod informer factory"},
		{"no kind", cl.Clientset, plainFactory(cl.Clientset), without(func(k *clientgo.Kind[*WebApp]) { k.GroupVersionKind.Kind = "" }), "no Kind.GroupVersionKind"},
		{"no resource", cl.Clientset, plainFactory(cl.Clientset), without(func(k *clientgo.Kind[*WebApp]) { k.Resource.Resource = "" }), "no Kind.Resource"},
		{"no informer", cl.Clientset, plainFactory(cl.Clientset), without(func(k *clientgo.Kind[*WebApp]) { k.Informer = nil }), "no Kind.Informer"},
		{"no client", cl.Clientset, plainFactory(cl.Clientset), without(func(k *clientgo.Kind[*WebApp]) { k.Client = nil }), "no Kind.Client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := clientgo.NewConfig(tc.client, tc.pods, tc.kind, clientgo.ConfigOptions{})
			require.ErrorContains(t, err, "clientgo: NewConfig: "+tc.wantErr)
		})
	}
	t.Run("no Status field", func(t *testing.T) {
		_, err := clientgo.NewConfig(cl.Clientset, plainFactory(cl.Clientset), clientgo.Kind[*noStatus]{
			GroupVersionKind: webAppGVK, Resource: webAppResource, Informer: apps.Informer(),
			Client: func(string) clientgo.OwnerClient[*noStatus] { return nil },
		}, clientgo.ConfigOptions{})
		require.ErrorContains(t, err, "clientgo: NewConfig: an owner type *clientgo_test.noStatus without a Status field")
	})
}

// ReplicaSets is NewConfig for ReplicaSets with upstream's Describe and
// Status: the same Kind, Resource and Cluster parts.
func TestReplicaSetsIsNewConfig(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	factory := plainFactory(cl.Clientset)
	rs := clientgo.ReplicaSets(cl.Clientset, factory, nil)
	cfg, err := clientgo.NewConfig(cl.Clientset, factory, clientgo.ReplicaSetKind(cl.Clientset, factory), clientgo.ConfigOptions{})
	require.NoError(t, err)
	upstream := reconcile.ReplicaSets()
	assert.Equal(t, upstream.Kind, rs.Kind)
	assert.Equal(t, cfg.Kind, rs.Kind)
	assert.Equal(t, upstream.Cluster.Resource, rs.Cluster.Resource)
	assert.Equal(t, cfg.Cluster.Resource, rs.Cluster.Resource)
	assert.IsType(t, clientgo.StatusWriter[*appsv1.ReplicaSet]{}, rs.Cluster.StatusWriter)
	assert.IsType(t, cfg.Cluster.PodClient, rs.Cluster.PodClient)
	assert.NotNil(t, rs.Describe)
	assert.NotNil(t, rs.Status)
}
