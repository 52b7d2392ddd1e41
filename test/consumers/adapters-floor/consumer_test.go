package consumer

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
)

const ns = "default"

func replicaSet(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "rs-uid", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

// ownedBy asserts that every pod is controlled by rs.
func ownedBy(t *testing.T, pods []corev1.Pod, rs *appsv1.ReplicaSet) {
	t.Helper()
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		require.NotNil(t, ref, "pod %s has a controller ref", p.Name)
		assert.Equal(t, rs.UID, ref.UID)
		assert.Equal(t, "ReplicaSet", ref.Kind)
	}
}

// One sync of the client-go controller on the adapters' fake cluster
// creates the missing pods, writes the status, and the pod events its
// handlers see reach the queue.
func TestClientGo(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
	defer factory.Shutdown() // after cancel: it waits for the informers to stop
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	ctrl, err := ClientGo(cl.Clientset, factory, queue)
	require.NoError(t, err)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	rs, err := cl.Clientset.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet(3), metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool { return queue.Len() > 0 }, "the owner handler queues the new ReplicaSet")
	key, _ := queue.Get()
	assert.Equal(t, ns+"/web", key)
	queue.Done(key)

	res, err := ctrl.Sync(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, -3, res.Diff)
	pods, err := cl.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 3)
	ownedBy(t, pods.Items, rs)
	got, err := cl.Clientset.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Status.ObservedGeneration, "the status was written")
	eventually(t, func() bool { return queue.Len() > 0 }, "the events of its writes (pods, status) requeue the owner")
}

// eventually waits, at most 20 seconds, until cond holds.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal(msg)
}

// The controller-runtime quick start's controller, on controller-runtime's
// fake client with its events fed (ctrlruntimetest): a scale-up writes the
// pods and the status, and a scale-down follows without the clock moving.
// In a manager (not started here), NewConfig turns the consistency gate on
// and Register builds the controller, at both ends of the range.
func TestControllerRuntime(t *testing.T) {
	rs := replicaSet(3)
	env, err := ctrlruntimetest.New(NewReplicaSets, ctrlruntimetest.Options{Objects: []client.Object{rs}})
	require.NoError(t, err)
	require.NoError(t, env.Settle())
	var pods corev1.PodList
	require.NoError(t, env.Client.List(t.Context(), &pods, client.InNamespace(ns)))
	require.Len(t, pods.Items, 3)
	ownedBy(t, pods.Items, rs)
	var got appsv1.ReplicaSet
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKeyFromObject(rs), &got))
	assert.Equal(t, int64(1), got.Status.ObservedGeneration, "the status was written")
	require.NoError(t, env.Client.Patch(t.Context(), rs, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))))
	require.NoError(t, env.Settle())
	require.NoError(t, env.Client.List(t.Context(), &pods, client.InNamespace(ns)))
	assert.Len(t, pods.Items, 1)

	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Metrics:        metricsserver.Options{BindAddress: "0"},
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
	})
	require.NoError(t, err)
	c, err := ControllerRuntime(mgr)
	require.NoError(t, err)
	require.NotNil(t, c)
	cfg, err := ctrlruntime.NewConfig[*appsv1.ReplicaSet](mgr, ctrlruntime.ConfigOptions{})
	require.NoError(t, err)
	assert.False(t, cfg.DisableConsistencyGate, "the gate is on")
	require.NotNil(t, cfg.Cluster.CacheVersions.Pods, "the cache's informers have stores")
	assert.Empty(t, cfg.Cluster.CacheVersions.Pods(), "a cache that has synced nothing")
}
