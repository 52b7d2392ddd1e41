package ctrlruntime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const ns = "default"

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

func pod(name string, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(uid)}}
}

// The UID precondition: a pod recreated under the same name is not
// deleted, and the refusal reads as NotFound (the chosen pod is gone).
func TestDeletePodUIDPrecondition(t *testing.T) {
	// controller-runtime's fake client ignores delete preconditions; the
	// interceptor enforces the UID one as an API server does (409).
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(pod("p", "x")).WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			var do client.DeleteOptions
			do.ApplyOptions(opts)
			var cur corev1.Pod
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &cur); err == nil && do.Preconditions != nil &&
				do.Preconditions.UID != nil && *do.Preconditions.UID != cur.UID {
				return apierrors.NewConflict(corev1.Resource("pods"), obj.GetName(), errors.New("precondition failed: UID"))
			}
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	pc := ctrlruntime.PodControl{Client: c}
	stale := pod("p", "old")
	err := pc.DeletePod(t.Context(), stale)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(stale), &corev1.Pod{}), "the pod under that name survives")

	cur := pod("p", "x")
	require.NoError(t, pc.DeletePod(t.Context(), cur))
	assert.True(t, apierrors.IsNotFound(c.Get(t.Context(), client.ObjectKeyFromObject(cur), &corev1.Pod{})))
}

func TestPodControlErrorsAndCopies(t *testing.T) {
	boom := apierrors.NewInternalError(errors.New("boom"))
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error { return boom },
	}).Build()
	pc := ctrlruntime.PodControl{Client: c}
	assert.True(t, apierrors.IsInternalError(pc.DeletePod(t.Context(), pod("p", "x"))))

	in := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: ns, Labels: map[string]string{"a": "b"}}}
	created, err := pc.CreatePod(t.Context(), in)
	require.NoError(t, err)
	assert.Empty(t, in.ResourceVersion, "the caller's pod is not modified")
	assert.NotEmpty(t, created.ResourceVersion)

	patched, err := pc.PatchPod(t.Context(), created, []byte(`{"metadata":{"labels":{"c":"d"}}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "b", "c": "d"}, patched.Labels)
	assert.Equal(t, map[string]string{"a": "b"}, created.Labels, "the caller's pod is not modified")
}

func TestOwnersAndPods(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	other := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "other"}}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rs, other, pod("p", "x")).Build()
	owners, err := ctrlruntime.NewOwners[*appsv1.ReplicaSet](c, c, scheme(t))
	require.NoError(t, err)
	got, err := owners.Get(ns, "web")
	require.NoError(t, err)
	assert.Equal(t, "web", got.Name)
	_, err = owners.Get(ns, "nope")
	assert.True(t, apierrors.IsNotFound(err))
	live, err := owners.GetLive(t.Context(), ns, "web")
	require.NoError(t, err)
	assert.Equal(t, ns, live.Namespace)
	list, err := owners.List(ns)
	require.NoError(t, err)
	assert.Len(t, list, 1, "only the namespace")
	pods, err := ctrlruntime.Pods{Reader: c}.List(ns)
	require.NoError(t, err)
	assert.Len(t, pods, 1)

	_, err = ctrlruntime.NewOwners[*appsv1.ReplicaSet](nil, c, scheme(t))
	assert.Error(t, err)
	_, err = ctrlruntime.NewOwners[*appsv1.ReplicaSet](c, c, runtime.NewScheme())
	assert.Error(t, err, "a type the scheme does not know")
}

func controller(t *testing.T, c client.Client) *reconcile.Controller[*appsv1.ReplicaSet] {
	cfg := reconcile.ReplicaSets()
	owners, err := ctrlruntime.NewOwners[*appsv1.ReplicaSet](c, c, scheme(t))
	require.NoError(t, err)
	pc := ctrlruntime.PodControl{Client: c}
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient, cfg.Cluster.PodClient = owners, ctrlruntime.Pods{Reader: c}, pc, pc
	cfg.Cluster.StatusWriter = ctrlruntime.StatusWriter[*appsv1.ReplicaSet]{Client: c}
	cfg.Cluster.CachesSynced = func() bool { return true } // the fake client holds everything from the start
	ctrl, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	return ctrl
}

// A terminal error goes back as controller-runtime's TerminalError (not
// retried): an invalid selector, a selector that does not match
// the template (R-14.7: with the ReplicaFailure condition written and no
// pod created), a key without a namespace; an owner that is gone
// is no error.
func TestReconcilerTerminalAndRequeue(t *testing.T) {
	one := int32(1)
	rs := func(name string, selector *metav1.LabelSelector, labels map[string]string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
			Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: selector, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
			}}}
	}
	web := map[string]string{"app": "web"}
	badOperator := rs("bad-operator", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}, web)
	mismatch := rs("mismatch", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wbe"}}, web)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(badOperator, mismatch).WithStatusSubresource(&appsv1.ReplicaSet{}).Build()
	r := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: controller(t, c)}
	tests := []struct {
		name      string
		key       client.ObjectKey
		want      error // nil: no error
		condition bool  // the ReplicaFailure condition is written
	}{
		{"R-10.4 an invalid selector", client.ObjectKeyFromObject(badOperator), reconcile.ErrInvalidSpec, true},
		{"R-14.7 a selector that does not match the template", client.ObjectKeyFromObject(mismatch), reconcile.ErrInvalidSpec, true},
		{"R-14.9 a key without a namespace", client.ObjectKey{Name: "mismatch"}, reconcile.ErrClusterScoped, false},
		{"an owner that is gone", client.ObjectKey{Namespace: ns, Name: "gone"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := r.Reconcile(t.Context(), crreconcile.Request{NamespacedName: tt.key})
			if tt.want == nil {
				assert.NoError(t, err)
				assert.Zero(t, res)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, crreconcile.TerminalError(nil), "not retried")
			assert.ErrorIs(t, err, reconcile.ErrTerminal)
			assert.ErrorIs(t, err, tt.want)
			if !tt.condition {
				return
			}
			var got appsv1.ReplicaSet
			require.NoError(t, c.Get(t.Context(), tt.key, &got))
			require.Len(t, got.Status.Conditions, 1)
			assert.Equal(t, appsv1.ReplicaSetReplicaFailure, got.Status.Conditions[0].Type)
			assert.Contains(t, got.Status.Conditions[0].Message, "spec.", "the message names the field")
		})
	}
	var pods corev1.PodList
	require.NoError(t, c.List(t.Context(), &pods))
	assert.Empty(t, pods.Items, "no pod created for an invalid owner")
}

// The pod handler enqueues a pod's controller owner; the owner handler
// forgets a deleted owner.
func TestHandlers(t *testing.T) {
	labels := map[string]string{"app": "web"}
	one := int32(1)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "rs-uid"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rs).Build()
	ctrl := controller(t, c)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]())
	defer q.ShutDown()
	p := pod("p", "")
	p.Labels = labels
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	ctrlruntime.PodHandler(ctrl).Create(t.Context(), event.TypedCreateEvent[*corev1.Pod]{Object: p}, q)
	require.Equal(t, 1, q.Len())
	item, _ := q.Get()
	assert.Equal(t, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(rs)}, item)
	q.Done(item)

	_, err := ctrlruntime.Reconciler[*appsv1.ReplicaSet]{Controller: ctrl}.Reconcile(t.Context(), item)
	require.NoError(t, err)
	assert.Positive(t, ctrl.Len())
	ctrlruntime.OwnerHandler(ctrl).Delete(t.Context(), event.TypedDeleteEvent[*appsv1.ReplicaSet]{Object: rs}, q)
	assert.Zero(t, ctrl.Len(), "nothing remembered for a deleted owner")

	q2 := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]())
	defer q2.ShutDown()
	ctrlruntime.Enqueue(q2, []reconcile.SyncRequest{{Key: "cluster-scoped", After: time.Nanosecond}})
	item, _ = q2.Get()
	assert.Equal(t, crreconcile.Request{NamespacedName: client.ObjectKey{Name: "cluster-scoped"}}, item)
}

// NewConfig refuses an owner kind the client's RESTMapper reports
// cluster-scoped, saying so; a namespaced kind, or one the mapper does not
// know (the fake client's empty mapper: Sync refuses a key without a
// namespace then), is accepted.
func TestNewConfigRefusesClusterScopedOwners(t *testing.T) {
	s := scheme(t)
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	m.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	mapped := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(m).Build()
	unmapped := fake.NewClientBuilder().WithScheme(s).Build()

	_, err := ctrlruntime.NewConfigFrom[*corev1.Namespace](mapped, mapped, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	require.Error(t, err)
	assert.ErrorIs(t, err, reconcile.ErrClusterScoped)
	assert.ErrorContains(t, err, "ctrlruntime: NewConfig: Namespace (namespaces) is cluster-scoped")

	_, err = ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](mapped, mapped, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	assert.NoError(t, err, "namespaced")
	_, err = ctrlruntime.NewConfigFrom[*corev1.Namespace](unmapped, unmapped, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	assert.NoError(t, err, "the mapper cannot tell: Sync refuses keys without a namespace")
}

func TestNewConfig(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	cfg, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), scheme(t), nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	require.NoError(t, err)
	assert.Equal(t, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), cfg.Kind)
	assert.NotNil(t, cfg.Cluster.Owners)
	assert.NotNil(t, cfg.Cluster.Pods)
	assert.NotNil(t, cfg.Cluster.PodClient)
	assert.NotNil(t, cfg.Cluster.PodClient)
	_, err = reconcile.NewController(cfg)
	assert.ErrorContains(t, err, "Describe", "the caller's part is still missing")
	_, err = ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), runtime.NewScheme(), nil, ctrlruntime.ConfigOptions{NoCacheVersions: true})
	assert.Error(t, err)
}
