package ctrlruntimetest_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const ns = "default"

func replicaSet(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: "web-uid", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}

func newEnv(t *testing.T, opts ctrlruntimetest.Options) *ctrlruntimetest.Env[*appsv1.ReplicaSet] {
	t.Helper()
	env, err := ctrlruntimetest.New(newController, opts)
	require.NoError(t, err)
	return env
}

func pods(t *testing.T, env *ctrlruntimetest.Env[*appsv1.ReplicaSet]) []*corev1.Pod {
	t.Helper()
	p, err := env.Pods(ns)
	require.NoError(t, err)
	return p
}

func scale(t *testing.T, env *ctrlruntimetest.Env[*appsv1.ReplicaSet], n int) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
	require.NoError(t, env.Client.Patch(t.Context(), &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, patch))
}

// The pod events of a round reach the Controller: a scale-up and a
// scale-down settle without the clock moving (R-10.3: a round waits for
// its events, not for the five-minute timeout); the pods created get a
// UID and the clock's creation time; the pod client's events are kept.
func TestSettleFeedsThePodEvents(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(5)}})
	require.NoError(t, env.Settle())
	created := pods(t, env)
	require.Len(t, created, 5)
	for _, p := range created {
		assert.NotEmpty(t, p.UID)
		assert.True(t, p.CreationTimestamp.Time.Equal(ctrlruntimetest.DefaultStart))
		assert.Equal(t, types.UID("web-uid"), metav1.GetControllerOf(p).UID)
	}
	scale(t, env, 2)
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 2)
	assert.True(t, env.Controller.Tracker().Satisfied(ns+"/web"), "every creation and deletion observed")
	var rs appsv1.ReplicaSet
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &rs))
	assert.Equal(t, int32(2), rs.Status.Replicas, "the status written and settled")
	events := env.Events()
	require.Len(t, events, 8)
	assert.Contains(t, events[0], "Normal SuccessfulCreate Created pod: web-")
	assert.Contains(t, events[7], "Normal SuccessfulDelete Deleted pod: web-")
	assert.Equal(t, time.Duration(0), env.Clock.Since(ctrlruntimetest.DefaultStart))
}

// Without Deliver, the Controller has seen none of its creations: a second
// reconcile creates nothing more. Deliver hands it the events.
func TestReconcileDeliversNothing(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(3)}})
	for range 2 {
		_, err := env.Reconcile(ns + "/web")
		require.NoError(t, err)
	}
	assert.Len(t, pods(t, env), 3)
	assert.False(t, env.Controller.Tracker().Satisfied(ns+"/web"))
	require.NoError(t, env.Deliver())
	assert.True(t, env.Controller.Tracker().Satisfied(ns+"/web"))
}

// A reconcile's RequeueAfter waits for the clock: pods ready for
// less than minReadySeconds are available once the clock has passed it.
func TestRequeueAfterWaitsForTheClock(t *testing.T) {
	rs := replicaSet(2)
	rs.Spec.MinReadySeconds = 10
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{rs}})
	require.NoError(t, env.Settle())
	for _, p := range pods(t, env) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(env.Clock.Now())}}
		require.NoError(t, env.Client.Status().Update(t.Context(), p))
	}
	require.NoError(t, env.Settle())
	status := func() appsv1.ReplicaSetStatus {
		var got appsv1.ReplicaSet
		require.NoError(t, env.Client.Get(t.Context(), client.ObjectKeyFromObject(rs), &got))
		return got.Status
	}
	assert.Equal(t, int32(2), status().ReadyReplicas)
	assert.Zero(t, status().AvailableReplicas, "ready for 0s of 10s")
	env.Clock.Step(10 * time.Second)
	require.NoError(t, env.Settle())
	assert.Equal(t, int32(2), status().AvailableReplicas, "the requeue came due")
}

// A write the interceptor fails makes no event and fails the reconcile;
// the next Settle retries it. A terminal error is returned, not retried.
func TestFaultsAndTerminalErrors(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	env := newEnv(t, ctrlruntimetest.Options{
		Objects: []client.Object{replicaSet(2)},
		Interceptor: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok && fail.Load() {
				return apierrors.NewInternalError(errors.New("injected"))
			}
			return c.Create(ctx, obj, opts...)
		}},
	})
	err := env.Settle()
	require.Error(t, err)
	assert.ErrorContains(t, err, "default/web: ")
	assert.Empty(t, pods(t, env))
	assert.Contains(t, env.Events(), "Warning FailedCreate Error creating: Internal error occurred: injected")
	fail.Store(false)
	require.NoError(t, env.Settle(), "retried")
	assert.Len(t, pods(t, env), 2)

	bad := replicaSet(1)
	bad.Name, bad.UID = "bad", "bad-uid"
	bad.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	require.NoError(t, env.Client.Create(t.Context(), bad))
	err = env.Settle()
	assert.ErrorIs(t, err, reconcile.ErrInvalidSpec)
	assert.ErrorIs(t, err, crreconcile.TerminalError(nil))
	assert.NoError(t, env.Settle(), "not retried")
}

// Deleting the owner delivers its delete event: the Controller forgets it.
func TestOwnerDeleteForgets(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(2)}})
	require.NoError(t, env.Settle())
	assert.Positive(t, env.Controller.Len())
	require.NoError(t, env.Client.Delete(t.Context(), replicaSet(0)))
	require.NoError(t, env.Settle())
	assert.Zero(t, env.Controller.Len())
}

// Enqueue queues a key by hand; the pod client takes the Config options
// (labels stamped, R-13.5) and reads pods live from the fake client.
func TestEnqueueAndConfigOptions(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(map[string]string{"owned": "yes"}, false)
	require.NoError(t, err)
	var pc reconcile.PodClient
	env, err := ctrlruntimetest.New(func(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
		pc = cfg.Cluster.PodClient
		return newController(cfg)
	}, ctrlruntimetest.Options{Config: ctrlruntime.ConfigOptions{OwnedPods: owned}})
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(t.Context(), replicaSet(1)))
	_, err = env.Reconcile(ns + "/web")
	require.NoError(t, err)
	require.Len(t, pods(t, env), 1)
	created := pods(t, env)[0]
	assert.Equal(t, "yes", created.Labels["owned"])
	env.Enqueue(ns + "/web")
	require.NoError(t, env.Settle())

	assert.Equal(t, map[string]string{"owned": "yes"}, pc.(reconcile.PodStamper).PodStamp(nil))
	live, err := pc.(reconcile.PodGetter).GetPod(t.Context(), ns, created.Name)
	require.NoError(t, err)
	assert.Equal(t, created.UID, live.UID)
	_, err = pc.(reconcile.PodGetter).GetPod(t.Context(), ns, "gone")
	assert.True(t, apierrors.IsNotFound(err), "a missing pod is NotFound: %v", err)
}

// New reports what it cannot build.
func TestNewErrors(t *testing.T) {
	_, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{Scheme: runtime.NewScheme()})
	assert.ErrorContains(t, err, "ctrlruntimetest: New: Options.Scheme: no kind is registered")
	_, err = ctrlruntimetest.New(func(reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
		return nil, errors.New("boom")
	}, ctrlruntimetest.Options{})
	assert.ErrorContains(t, err, "ctrlruntimetest: New: build: boom")
	_, err = ctrlruntimetest.New(func(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
		return reconcile.NewController(cfg) // no Describe
	}, ctrlruntimetest.Options{})
	assert.ErrorContains(t, err, "Describe")
}

// Issue 40: an orphan adopted and deleted in the same sync (a ReplicaSet
// of 0 replicas adopting a matching orphan, R-12.2, then deleting the
// surplus, R-9.3) records its SuccessfulDelete event against the owner:
// the delete gets the pod as adopted, with its controller reference.
// Before, it got the orphan as listed, and no event was recorded.
func TestAdoptedAndDeletedInOneSyncRecordsTheEvent(t *testing.T) {
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stray", UID: "stray-uid", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(0), orphan}})
	require.NoError(t, env.Settle())
	assert.Empty(t, pods(t, env), "adopted, then deleted as surplus")
	assert.Equal(t, []string{"Normal SuccessfulDelete Deleted pod: stray"}, env.Events())
}
