package controller_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

const ns = "default"

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is the PodSet Controller on controller-runtime's fake client
// (ctrlruntimetest.Env), driven a step at a time: reconcile runs one
// reconcile, observe delivers the events of the writes made since the last
// call (the pod and PodSet watches).
type harness struct {
	t   *testing.T
	env *ctrlruntimetest.Env[*v1alpha1.PodSet]
	c   client.WithWatch
	r   *controller.Controller
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	return scheme
}

func newHarness(t *testing.T, ps *v1alpha1.PodSet, funcs interceptor.Funcs) *harness {
	t.Helper()
	return newHarnessWith(t, ps, funcs, controller.Options{})
}

func newHarnessWith(t *testing.T, ps *v1alpha1.PodSet, funcs interceptor.Funcs, opts controller.Options) *harness {
	t.Helper()
	env, err := ctrlruntimetest.New(func(cfg reconcile.Config[*v1alpha1.PodSet]) (*controller.Controller, error) {
		return controller.New(cfg, opts)
	}, ctrlruntimetest.Options{
		Scheme:      newScheme(t),
		Objects:     []client.Object{ps},
		Interceptor: funcs,
		Config:      ctrlruntime.ConfigOptions{OwnedPods: opts.OwnedPods, EventPerBatch: opts.EventPerBatch},
		Start:       t0,
	})
	require.NoError(t, err)
	return &harness{t: t, env: env, c: env.Client, r: env.Controller}
}

func podSet(replicas int32) *v1alpha1.PodSet {
	labels := map[string]string{"app": "web"}
	return &v1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "ps-uid", Generation: 1},
		Spec: v1alpha1.PodSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
			},
		},
	}
}

func (h *harness) reconcile() (crreconcile.Result, error) {
	h.t.Helper()
	return h.env.Reconcile(ns + "/web")
}

func (h *harness) pods() []*corev1.Pod {
	h.t.Helper()
	pods, err := h.env.Pods(ns)
	require.NoError(h.t, err)
	return pods
}

// observe delivers the events of the writes since the last call.
func (h *harness) observe() {
	h.t.Helper()
	require.NoError(h.t, h.env.Deliver())
}

// makeReady marks every pod Running and Ready since readySince.
func (h *harness) makeReady(readySince time.Time) {
	h.t.Helper()
	for _, p := range h.pods() {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(readySince)}}
		require.NoError(h.t, h.c.Status().Update(h.t.Context(), p))
	}
}

func (h *harness) podSet() *v1alpha1.PodSet {
	h.t.Helper()
	var ps v1alpha1.PodSet
	require.NoError(h.t, h.c.Get(h.t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &ps))
	return &ps
}

func (h *harness) scale(n int32) {
	h.t.Helper()
	ps := h.podSet()
	ps.Spec.Replicas = &n
	ps.Generation++
	require.NoError(h.t, h.c.Update(h.t.Context(), ps))
}

// Scale up, status counts and observedGeneration, the expectations gate
// between rounds, then scale down.
func TestReconcileScalesAndReportsStatus(t *testing.T) {
	h := newHarness(t, podSet(5), interceptor.Funcs{})

	_, err := h.reconcile()
	require.NoError(t, err)
	require.Len(t, h.pods(), 5, "created in slow-start batches (R-9.2)")
	for _, p := range h.pods() {
		ref := metav1.GetControllerOf(p)
		require.NotNil(t, ref)
		assert.Equal(t, "PodSet", ref.Kind)
		assert.Equal(t, v1alpha1.GroupVersion.String(), ref.APIVersion)
	}

	// The creations are not observed yet: a second pass must not create again.
	_, err = h.reconcile()
	require.NoError(t, err)
	assert.Len(t, h.pods(), 5, "unsatisfied expectations block the next round (R-10.3)")

	h.observe()
	h.makeReady(t0.Add(-time.Minute))
	_, err = h.reconcile()
	require.NoError(t, err)
	st := h.podSet().Status
	assert.Equal(t, v1alpha1.PodSetStatus{ObservedGeneration: 1, Replicas: 5, ReadyReplicas: 5, AvailableReplicas: 5}, st)

	h.scale(2)
	_, err = h.reconcile()
	require.NoError(t, err)
	assert.Len(t, h.pods(), 2)
	h.observe()
	_, err = h.reconcile()
	require.NoError(t, err)
	st = h.podSet().Status
	assert.Equal(t, int64(2), st.ObservedGeneration)
	assert.Equal(t, int32(2), st.Replicas)
}

// An injected create failure stops the slow start, lowers the
// expectations for the failed and skipped creates, and sets the
// ReplicaFailure condition with reason FailedCreate; the next
// successful pass removes it.
func TestCreateFailureSetsReplicaFailure(t *testing.T) {
	var creates atomic.Int32
	h := newHarness(t, podSet(7), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok && creates.Add(1) == 3 {
				return apierrors.NewInternalError(errors.New("injected"))
			}
			return c.Create(ctx, obj, opts...)
		},
	})

	_, err := h.reconcile()
	require.Error(t, err)
	assert.Len(t, h.pods(), 2, "batches 1 and 2; the second had one failure, the rest were never attempted")
	cond := meta.FindStatusCondition(h.podSet().Status.Conditions, v1alpha1.ConditionReplicaFailure)
	require.NotNil(t, cond)
	assert.Equal(t, metav1.ConditionTrue, cond.Status)
	assert.Equal(t, "FailedCreate", cond.Reason)
	assert.Equal(t, int64(1), cond.ObservedGeneration)
	assert.True(t, cond.LastTransitionTime.Time.Equal(t0), "the condition time is the Manager's clock")

	h.observe() // the 2 created pods; the 5 others were lowered already
	_, err = h.reconcile()
	require.NoError(t, err)
	assert.Len(t, h.pods(), 7)
	assert.Nil(t, meta.FindStatusCondition(h.podSet().Status.Conditions, v1alpha1.ConditionReplicaFailure),
		"removed by the first pass without a manage error (R-8.4)")
}

// An injected delete failure is lowered by pod key and reported as
// FailedDelete; other deletes of the same pass still happen.
func TestDeleteFailureSetsReplicaFailure(t *testing.T) {
	var failOnce sync.Once
	h := newHarness(t, podSet(4), interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			failed := false
			failOnce.Do(func() { failed = true })
			if failed {
				return apierrors.NewServiceUnavailable("injected")
			}
			return c.Delete(ctx, obj, opts...)
		},
	})
	_, err := h.reconcile()
	require.NoError(t, err)
	h.observe()
	h.makeReady(t0.Add(-time.Minute))

	h.scale(1)
	_, err = h.reconcile()
	require.Error(t, err)
	assert.Len(t, h.pods(), 2, "two of the three deletes went through")
	cond := meta.FindStatusCondition(h.podSet().Status.Conditions, v1alpha1.ConditionReplicaFailure)
	require.NotNil(t, cond)
	assert.Equal(t, "FailedDelete", cond.Reason)

	h.observe()
	_, err = h.reconcile()
	require.NoError(t, err)
	assert.Len(t, h.pods(), 1)
	assert.Empty(t, h.podSet().Status.Conditions)
}

// Ready but not yet available pods make the reconciler come back exactly
// when the first of them becomes available.
func TestRequeuesForAvailability(t *testing.T) {
	ps := podSet(3)
	ps.Spec.MinReadySeconds = 10
	h := newHarness(t, ps, interceptor.Funcs{})
	_, err := h.reconcile()
	require.NoError(t, err)
	h.observe()
	h.makeReady(t0.Add(-4 * time.Second))

	res, err := h.reconcile()
	require.NoError(t, err)
	st := h.podSet().Status
	assert.Equal(t, int32(3), st.ReadyReplicas)
	assert.Zero(t, st.AvailableReplicas)
	assert.Equal(t, 6*time.Second, res.RequeueAfter)
}

// A PodSet that is gone drops its expectations and is not an error.
func TestDeletedPodSetForgetsExpectations(t *testing.T) {
	h := newHarness(t, podSet(3), interceptor.Funcs{})
	_, err := h.reconcile()
	require.NoError(t, err)
	_, _, ok := h.r.Tracker().Pending(ns + "/web")
	require.True(t, ok)

	require.NoError(t, h.c.Delete(t.Context(), h.podSet()))
	_, err = h.reconcile()
	require.NoError(t, err)
	_, _, ok = h.r.Tracker().Pending(ns + "/web")
	assert.False(t, ok)
}

// Pods owned by another controller, or not matching the selector, are
// neither counted nor deleted.
func TestIgnoresForeignPods(t *testing.T) {
	h := newHarness(t, podSet(0), interceptor.Funcs{})
	foreign := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "foreign", Namespace: ns, Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "PodSet", Name: "other", UID: "other", Controller: ptr(true)}},
	}}
	require.NoError(t, h.c.Create(t.Context(), foreign))
	_, err := h.reconcile()
	require.NoError(t, err)
	assert.Len(t, h.pods(), 1)
	assert.Zero(t, h.podSet().Status.Replicas)
}

func ptr[T any](v T) *T { return &v }

// An orphan matching the selector is adopted (R-12.2: a patch adding the
// controller ref), and counts; an owned pod whose labels stop matching is
// released (the ref is removed) and replaced.
func TestAdoptsAndReleases(t *testing.T) {
	h := newHarness(t, podSet(1), interceptor.Funcs{})
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": "web"}}}
	require.NoError(t, h.c.Create(t.Context(), orphan))
	_, err := h.reconcile()
	require.NoError(t, err)
	require.Len(t, h.pods(), 1, "the orphan counts: nothing created")
	got := h.pods()[0]
	require.NotNil(t, metav1.GetControllerOf(got))
	assert.Equal(t, types.UID("ps-uid"), metav1.GetControllerOf(got).UID)
	assert.Equal(t, int32(1), h.podSet().Status.Replicas)

	got.Labels = map[string]string{"app": "other"}
	require.NoError(t, h.c.Update(t.Context(), got))
	_, err = h.reconcile()
	require.NoError(t, err)
	var released corev1.Pod
	require.NoError(t, h.c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "orphan"}, &released))
	assert.Nil(t, metav1.GetControllerOf(&released), "released")
	assert.Len(t, h.pods(), 2, "and replaced")
}

// Deletion ranks count the pods of related PodSets (those with the same
// controller) on the same node: of two otherwise equal pods, the one
// sharing its node with a sibling's pods goes first.
func TestDeletionRanksWithRelatedPods(t *testing.T) {
	deploy := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "deploy-uid", Controller: ptr(true)}
	ps := podSet(2)
	ps.OwnerReferences = []metav1.OwnerReference{deploy}
	h := newHarness(t, ps, interceptor.Funcs{})
	sib := podSet(2)
	sib.Name, sib.UID, sib.OwnerReferences = "sib", "sib-uid", []metav1.OwnerReference{deploy}
	sib.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sib"}}
	require.NoError(t, h.c.Create(t.Context(), sib))
	mk := func(name, node string, owner *v1alpha1.PodSet, app string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "demo.reconcilekit.dev/v1alpha1", Kind: "PodSet", Name: owner.Name, UID: owner.UID, Controller: ptr(true)}}},
			Spec: corev1.PodSpec{NodeName: node}}
		require.NoError(t, h.c.Create(t.Context(), p))
	}
	mk("crowded", "node-1", ps, "web")
	mk("alone", "node-2", ps, "web")
	mk("sib-1", "node-1", sib, "sib")
	mk("sib-2", "node-1", sib, "sib")
	h.makeReady(t0.Add(-time.Hour))
	_, err := h.reconcile()
	require.NoError(t, err)
	h.scale(1)
	_, err = h.reconcile()
	require.NoError(t, err)
	var gone corev1.Pod
	assert.True(t, apierrors.IsNotFound(h.c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "crowded"}, &gone)), "the pod sharing its node with related pods is deleted")
	require.NoError(t, h.c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "alone"}, &gone))
}

// A PodSet whose spec apps/v1 would refuse for a ReplicaSet (the CRD's
// rules refuse it too, but a cluster may have an older copy of the CRD)
// is a terminal error in its first reconcile: its ReplicaFailure
// condition names the field, its generation is observed, and no pod is
// created, adopted or released, in that reconcile or the next.
func TestInvalidSpecIsTerminal(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*v1alpha1.PodSetSpec)
		want string // in the condition's message
	}{
		//
		{"selector mismatch", func(s *v1alpha1.PodSetSpec) { s.Template.Labels = map[string]string{"app": "other"} }, "spec.template.metadata.labels: Invalid value"},
		//
		{"selector empty", func(s *v1alpha1.PodSetSpec) { s.Selector = &metav1.LabelSelector{} }, "spec.selector: Invalid value"},
		{"selector missing", func(s *v1alpha1.PodSetSpec) { s.Selector = nil }, "spec.selector: Required value"},
		{"selector operator", func(s *v1alpha1.PodSetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus", Values: []string{"web"}}}}
		}, "spec.selector.matchExpressions[0].operator: Invalid value"},
		// apps/v1 accepts a template without labels only when the
		// selector matches empty labels; this one needs app=web.
		{"template without labels", func(s *v1alpha1.PodSetSpec) { s.Template.Labels = nil }, "spec.template.metadata.labels: Invalid value"},
		//
		{"restartPolicy Never", func(s *v1alpha1.PodSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }, `spec.template.spec.restartPolicy: Unsupported value: "Never"`},
		{"restartPolicy OnFailure", func(s *v1alpha1.PodSetSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, `spec.template.spec.restartPolicy: Unsupported value: "OnFailure"`},
		//
		{"activeDeadlineSeconds", func(s *v1alpha1.PodSetSpec) { s.Template.Spec.ActiveDeadlineSeconds = ptr[int64](60) }, "spec.template.spec.activeDeadlineSeconds: Forbidden"},
		//
		{"minReadySeconds negative", func(s *v1alpha1.PodSetSpec) { s.MinReadySeconds = -1 }, "spec.minReadySeconds: Invalid value: -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := podSet(3)
			c.edit(&ps.Spec)
			h := newHarness(t, ps, interceptor.Funcs{})
			// An orphan the selector matches, and a pod of the PodSet's
			// that it does not: a valid PodSet would adopt the first and
			// release the second.
			orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": "web"}}}
			owned := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns, Labels: map[string]string{"app": "elsewhere"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ps, v1alpha1.GroupVersion.WithKind("PodSet"))}}}
			require.NoError(t, h.c.Create(t.Context(), orphan))
			require.NoError(t, h.c.Create(t.Context(), owned))

			for pass := 1; pass <= 2; pass++ {
				_, err := h.reconcile()
				require.Error(t, err, "pass %d", pass)
				assert.ErrorIs(t, err, reconcile.ErrInvalidSpec, "pass %d", pass)
				assert.ErrorIs(t, err, crreconcile.TerminalError(nil), "pass %d: not retried", pass)
				pods := h.pods()
				require.Len(t, pods, 2, "pass %d: pods created", pass)
				for _, p := range pods {
					switch p.Name {
					case "orphan":
						assert.Nil(t, metav1.GetControllerOf(p), "pass %d: the orphan adopted", pass)
					case "owned":
						assert.NotNil(t, metav1.GetControllerOf(p), "pass %d: the owned pod released", pass)
					}
				}
				st := h.podSet().Status
				assert.Equal(t, int64(1), st.ObservedGeneration, "pass %d", pass)
				cond := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReplicaFailure)
				if assert.NotNil(t, cond, "pass %d: no ReplicaFailure condition", pass) {
					assert.Equal(t, metav1.ConditionTrue, cond.Status)
					assert.Contains(t, cond.Message, c.want)
				}
			}
		})
	}
}

// the runaway probe of issue 32 on controller-runtime: PodSets
// whose spec apps/v1 would reject for a ReplicaSet (the CRD's validation
// rules are a second line; the fake client applies none), replicas 3,
// four reconciles with the pod events delivered between them. Before, a
// selector that does not match the template made each reconcile create 3
// pods that the next one released: 3 → 6 → 9 → 12. Now each reconcile is
// terminal (controller-runtime's TerminalError: not retried), creates,
// adopts and releases nothing, and the first writes the ReplicaFailure
// condition naming the field.
func TestInvalidSpecIsTerminalWithItsCondition(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*v1alpha1.PodSet)
		field string // in the condition's message
	}{
		{"R-14.7 a selector that does not match the template", func(ps *v1alpha1.PodSet) {
			ps.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wbe"}}
		}, "spec.template.metadata.labels"},
		{"R-14.7 no selector", func(ps *v1alpha1.PodSet) { ps.Spec.Selector = nil }, "spec.selector"},
		{"R-14.7 an empty selector", func(ps *v1alpha1.PodSet) { ps.Spec.Selector = &metav1.LabelSelector{} }, "spec.selector"},
		{"R-14.7 pods that may finish", func(ps *v1alpha1.PodSet) {
			ps.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}, "spec.template.spec.restartPolicy"},
		{"R-14.7 an active deadline", func(ps *v1alpha1.PodSet) {
			ps.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(60))
		}, "spec.template.spec.activeDeadlineSeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := podSet(3)
			tt.edit(ps)
			h := newHarness(t, ps, interceptor.Funcs{})
			var pods []int
			for range 4 {
				_, err := h.reconcile()
				assert.ErrorIs(t, err, crreconcile.TerminalError(nil), "not retried")
				assert.ErrorIs(t, err, reconcile.ErrInvalidSpec)
				h.observe()
				pods = append(pods, len(h.pods()))
			}
			assert.Equal(t, []int{0, 0, 0, 0}, pods, "pods after each reconcile")
			st := h.podSet().Status
			cond := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReplicaFailure)
			require.NotNil(t, cond, "the ReplicaFailure condition is written")
			assert.Equal(t, metav1.ConditionTrue, cond.Status)
			assert.Contains(t, cond.Message, tt.field, "the message names the field")
			assert.Equal(t, int64(1), st.ObservedGeneration)
		})
	}
}

// with OwnedPods (-owned-pods-label) every pod the controller
// creates carries its labels, next to the template's labels.
func TestPodLabelsAreStamped(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(map[string]string{v1alpha1.OwnedLabel: "true"}, false)
	require.NoError(t, err)
	h := newHarnessWith(t, podSet(3), interceptor.Funcs{}, controller.Options{OwnedPods: owned})
	_, err = h.reconcile()
	require.NoError(t, err)
	pods := h.pods()
	require.Len(t, pods, 3)
	for _, p := range pods {
		assert.Equal(t, "true", p.Labels[v1alpha1.OwnedLabel], p.Name)
		for k, v := range h.podSet().Spec.Template.Labels {
			assert.Equal(t, v, p.Labels[k], p.Name)
		}
	}
	assert.NotContains(t, h.podSet().Spec.Template.Labels, v1alpha1.OwnedLabel, "the template is not modified")
}

// issue 40: a PodSet whose selector excludes the label the
// controller stamps (DoesNotExist on its key, or NotIn its value; the CRD
// refuses both, so only a PodSet stored without the CRD's rules gets
// here) would release every pod it creates and create it again without
// end. No pod is created and every reconcile is terminal, with the
// ReplicaFailure condition naming the stamp.
func TestSelectorExcludingTheStampIsTerminal(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(map[string]string{v1alpha1.OwnedLabel: "true"}, false)
	require.NoError(t, err)
	for name, excluding := range map[string]metav1.LabelSelectorRequirement{
		"DoesNotExist": {Key: v1alpha1.OwnedLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
		"NotIn":        {Key: v1alpha1.OwnedLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
	} {
		t.Run(name, func(t *testing.T) {
			ps := podSet(3)
			ps.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{excluding}
			h := newHarnessWith(t, ps, interceptor.Funcs{}, controller.Options{OwnedPods: owned})
			for range 4 {
				err := h.env.Settle()
				require.Error(t, err)
				assert.ErrorIs(t, err, reconcile.ErrTerminal)
				h.env.Enqueue(ns + "/web")
			}
			assert.Empty(t, h.pods(), "no pod created")
			cond := meta.FindStatusCondition(h.podSet().Status.Conditions, v1alpha1.ConditionReplicaFailure)
			require.NotNil(t, cond, "the ReplicaFailure condition is written")
			assert.Equal(t, metav1.ConditionTrue, cond.Status)
			assert.Contains(t, cond.Message, v1alpha1.OwnedLabel, "the message names the stamp")
		})
	}
}
