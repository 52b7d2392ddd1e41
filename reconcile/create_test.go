package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

var errRecQuota = errors.New("quota exceeded")

func TestManageReplicasCreates(t *testing.T) {
	failAt := func(idx ...int) func(context.Context, *corev1.Pod, int) error {
		return func(_ context.Context, _ *corev1.Pod, call int) error {
			for _, i := range idx {
				if call == i {
					return fmt.Errorf("call %d: %w", call, errRecQuota)
				}
			}
			return nil
		}
	}
	cases := []struct {
		name      string
		have      int
		want      int32
		burst     int
		slow      slowstart.Options
		createErr func(context.Context, *corev1.Pod, int) error
		wantOut   reconcile.Outcome // counts and Batches only
		wantAdds  int
		wantErr   bool
	}{
		{name: "R-9.2 creates the missing pods in slow-start batches 1,2,4,3", have: 0, want: 10,
			wantOut: reconcile.Outcome{Diff: -10, Expected: 10, Batches: []int{1, 2, 4, 3}}, wantAdds: 10},
		{name: "R-9.2 counts only the missing pods", have: 2, want: 5,
			wantOut: reconcile.Outcome{Diff: -3, Expected: 3, Batches: []int{1, 2}}, wantAdds: 3},
		{name: "R-1.3 burst caps the creates of one call", have: 0, want: 25, burst: 10,
			wantOut: reconcile.Outcome{Diff: -25, Expected: 10, Batches: []int{1, 2, 4, 3}}, wantAdds: 10},
		{name: "R-1.3 default burst is 500", have: 0, want: 600,
			wantOut: reconcile.Outcome{Diff: -600, Expected: 500, Batches: []int{1, 2, 4, 8, 16, 32, 64, 128, 245}}, wantAdds: 500},
		{name: "slow start options pass through", have: 0, want: 10, slow: slowstart.Options{InitialBatchSize: 3, MaxBatchSize: 4},
			wantOut: reconcile.Outcome{Diff: -10, Expected: 10, Batches: []int{3, 4, 3}}, wantAdds: 10},
		{name: "R-9.2 a failing batch stops the slow start; failed and skipped are lowered", have: 0, want: 10,
			createErr: failAt(3),
			wantOut:   reconcile.Outcome{Diff: -10, Expected: 10, CreateFailed: 1, Skipped: 3, Batches: []int{1, 2, 4}},
			wantAdds:  6, wantErr: true},
		{name: "R-9.2 a failure in the first batch skips everything else", have: 0, want: 5,
			createErr: failAt(0),
			wantOut:   reconcile.Outcome{Diff: -5, Expected: 5, CreateFailed: 1, Skipped: 4, Batches: []int{1}},
			wantAdds:  0, wantErr: true},
		{name: "R-9.2 NamespaceTerminating counts as success and is not lowered", have: 0, want: 10,
			createErr: func(context.Context, *corev1.Pod, int) error { return recNamespaceTerminating() },
			wantOut:   reconcile.Outcome{Diff: -10, Expected: 10, NamespaceTerminating: 10, Batches: []int{1, 2, 4, 3}},
			wantAdds:  10},
		{name: "R-9.2 a wrapped NamespaceTerminating error is recognized", have: 0, want: 3,
			createErr: func(context.Context, *corev1.Pod, int) error {
				return fmt.Errorf("wrapped: %w", recNamespaceTerminating())
			},
			wantOut:  reconcile.Outcome{Diff: -3, Expected: 3, NamespaceTerminating: 3, Batches: []int{1, 2}},
			wantAdds: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.want)
			pods := &recPods{CreateErr: tc.createErr}
			m := &reconcile.Manager{Pods: pods, BurstReplicas: tc.burst, SlowStart: tc.slow}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recOwned(rs, tc.have), nil)
			if tc.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, errRecQuota)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantOut.Diff, out.Diff, "Diff")
			assert.Equal(t, tc.wantOut.Expected, out.Expected, "Expected")
			assert.Equal(t, tc.wantOut.Batches, out.Batches, "Batches")
			assert.Equal(t, tc.wantOut.CreateFailed, out.CreateFailed, "CreateFailed")
			assert.Equal(t, tc.wantOut.Skipped, out.Skipped, "Skipped")
			assert.Equal(t, tc.wantOut.NamespaceTerminating, out.NamespaceTerminating, "NamespaceTerminating")
			calls := len(pods.creates())
			assert.Equal(t, tc.wantOut.Expected-tc.wantOut.Skipped, calls, "create calls")
			assert.Len(t, out.Created, calls-out.CreateFailed-out.NamespaceTerminating, "Created")
			recPending(t, m, "default/web", tc.wantAdds, 0)
		})
	}
}

// step 2: the creations are expected before the first create, and the
// deletion counter is zeroed.
func TestManageReplicasExpectsBeforeFirstCreate(t *testing.T) {
	rs := recRS(3)
	tracker := expectations.New(expectations.Options{})
	tracker.ExpectDeletions("default/web", []string{"default/old"})
	var seen [][2]int
	pods := &recPods{CreateErr: func(_ context.Context, _ *corev1.Pod, call int) error {
		if call == 0 {
			a, d, _ := tracker.Pending("default/web")
			seen = append(seen, [2]int{a, d})
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods, Expectations: tracker}
	_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{3, 0}}, seen)
}

// The pod sent to CreatePod: namespace, GenerateName, deep copies of the
// template's metadata and spec, and a controller ownerRef (R-9.2 step 3,
//
func TestManageReplicasBuildsPodFromTemplate(t *testing.T) {
	rs := recRS(2)
	before := rs.DeepCopy()
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods}
	_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.NoError(t, err)
	sent := pods.creates()
	require.Len(t, sent, 2)
	p := sent[0]
	assert.Equal(t, "default", p.Namespace)
	assert.Equal(t, "web-", p.GenerateName)
	assert.Empty(t, p.Name)
	assert.Equal(t, rs.Spec.Template.Labels, p.Labels)
	assert.Equal(t, rs.Spec.Template.Annotations, p.Annotations)
	assert.Equal(t, rs.Spec.Template.Finalizers, p.Finalizers)
	assert.True(t, equality.Semantic.DeepEqual(rs.Spec.Template.Spec, p.Spec))
	require.Len(t, p.OwnerReferences, 1)
	ref := p.OwnerReferences[0]
	assert.Equal(t, "apps/v1", ref.APIVersion)
	assert.Equal(t, "ReplicaSet", ref.Kind)
	assert.Equal(t, "web", ref.Name)
	assert.Equal(t, rs.UID, ref.UID)
	require.NotNil(t, ref.Controller)
	require.NotNil(t, ref.BlockOwnerDeletion)
	assert.True(t, *ref.Controller)
	assert.True(t, *ref.BlockOwnerDeletion)

	// Deep copies: changing what was sent leaves the template alone.
	p.Labels["app"] = "changed"
	p.Annotations["note"] = "changed"
	p.Finalizers[0] = "changed"
	p.Spec.Containers[0].Image = "changed"
	assert.Equal(t, before, rs)
	assert.NotSame(t, &sent[0].Spec.Containers[0], &sent[1].Spec.Containers[0])
}

func TestManageReplicasCustomOwner(t *testing.T) {
	owner := recRS(1)
	o := reconcile.Owner{
		Key:      "team-a/cache",
		Object:   &owner.ObjectMeta,
		Kind:     corev1.SchemeGroupVersion.WithKind("PodSet"), // any GVK
		Replicas: 1,
		Template: &owner.Spec.Template,
	}
	o.Object.SetNamespace("team-a")
	o.Object.SetName("cache")
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods}
	_, err := m.ManageReplicas(context.Background(), o, nil, nil)
	require.NoError(t, err)
	sent := pods.creates()
	require.Len(t, sent, 1)
	assert.Equal(t, "team-a", sent[0].Namespace)
	assert.Equal(t, "cache-", sent[0].GenerateName)
	assert.Equal(t, "PodSet", sent[0].OwnerReferences[0].Kind)
	assert.Equal(t, "v1", sent[0].OwnerReferences[0].APIVersion)
	recPending(t, m, "team-a/cache", 1, 0) // expected under Owner.Key, not yet observed
}

// Several failures of one batch are all reported, in call order.
func TestManageReplicasJoinsBatchFailures(t *testing.T) {
	rs := recRS(7)
	errA, errB := errors.New("a"), errors.New("b")
	// Batch 3 holds indices 3..6. Tracked names reveal the index of a
	// pod, whatever order the goroutines run in.
	pods := &recPods{CreateErr: func(_ context.Context, p *corev1.Pod, _ int) error {
		switch p.Name {
		case "web-4":
			return errB
		case "web-5":
			return errA
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods, TrackCreations: true, NameGenerator: recSeqNames()}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	require.Error(t, err)
	assert.Equal(t, 2, out.CreateFailed)
	assert.ErrorIs(t, err, errA)
	assert.ErrorIs(t, err, errB)
	assert.Equal(t, "b\na", err.Error(), "call order, deterministic")
}

func TestManageReplicasRejectsBadInput(t *testing.T) {
	nilTemplate := reconcile.ReplicaSetOwner(recRS(3))
	nilTemplate.Template = nil
	negative := reconcile.ReplicaSetOwner(recRS(1))
	negative.Replicas = -1
	noObject := reconcile.ReplicaSetOwner(recRS(1))
	noObject.Object = nil
	noKey := reconcile.ReplicaSetOwner(recRS(1))
	noKey.Key = ""
	cases := []struct {
		name  string
		owner reconcile.Owner
		nilPC bool
		ctx   func() context.Context
		want  string
	}{
		{name: "nil template when creates are needed", owner: nilTemplate, want: "spec.template: Required value"},
		{name: "negative replicas", owner: negative, want: "must not be negative"},
		{name: "no owner object", owner: noObject, want: "no Object"},
		{name: "typed nil owner object", owner: reconcile.ReplicaSetOwner(nil), want: "no Object"},
		{name: "empty key", owner: noKey, want: "empty Key"},
		{name: "nil PodControl", owner: reconcile.ReplicaSetOwner(recRS(3)), nilPC: true, want: "Pods is nil"},
		{name: "done context", owner: reconcile.ReplicaSetOwner(recRS(3)), ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, want: "context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods}
			if tc.nilPC {
				m.Pods = nil
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			_, err := m.ManageReplicas(ctx, tc.owner, nil, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "reconcile: ")
			assert.Empty(t, pods.creates(), "no create call")
			_, _, ok := m.Tracker().Pending(tc.owner.Key)
			assert.False(t, ok, "no expectations set")
		})
	}
}

// as apps/v1, a template without labels is one to create
// from; a selector that matches empty labels keeps what it makes, and one
// that needs a label sees the first pod the API returns deleted at once,
// listed in NotSelected and lowered in the expectations, and the round
// stopped with a terminal ErrCreationsStopped.
func TestManageReplicasTemplateWithoutLabels(t *testing.T) {
	t.Run("selector matches empty labels", func(t *testing.T) {
		rs := recRS(3)
		rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpDoesNotExist}}}
		rs.Spec.Template.Labels = nil
		pods := &recPods{}
		m := &reconcile.Manager{Pods: pods}
		out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
		require.NoError(t, err)
		assert.Len(t, out.Created, 3)
		assert.Empty(t, out.NotSelected)
		assert.Empty(t, pods.deletes())
		recPending(t, m, "default/web", 3, 0)
	})
	t.Run("selector needs a label", func(t *testing.T) {
		rs := recRS(3)
		rs.Spec.Template.Labels = nil
		pods := &recPods{}
		m := &reconcile.Manager{Pods: pods}
		out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
		require.ErrorIs(t, err, reconcile.ErrCreationsStopped)
		assert.ErrorIs(t, err, reconcile.ErrTerminal)
		require.Len(t, pods.creates(), 1, "the first slow-start batch only")
		require.Len(t, out.NotSelected, 1)
		assert.Empty(t, out.Created)
		assert.Equal(t, []string{reconcile.PodKey(out.NotSelected[0])}, pods.deletes(), "deleted at once")
		recPending(t, m, "default/web", 0, 0)
	})
}

// A nil template is fine when only deletes are needed.
func TestManageReplicasNilTemplateDeletes(t *testing.T) {
	rs := recRS(1)
	o := reconcile.ReplicaSetOwner(rs)
	o.Template = nil
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods}
	_, err := m.ManageReplicas(context.Background(), o, recOwned(rs, 2), nil)
	require.NoError(t, err)
	assert.Len(t, pods.deletes(), 1)
}

// diff == 0 makes no call and leaves the expectations as they were.
func TestManageReplicasNothingToDo(t *testing.T) {
	rs := recRS(3)
	pods := &recPods{}
	m := &reconcile.Manager{Pods: pods}
	m.Tracker().Set("default/web", 2, 5)
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recOwned(rs, 3), nil)
	require.NoError(t, err)
	assert.Equal(t, reconcile.Outcome{}, out)
	assert.Empty(t, pods.creates())
	assert.Empty(t, pods.deletes())
	recPending(t, m, "default/web", 2, 5)
}

// Nil and duplicate entries of active are not counted.
func TestManageReplicasIgnoresNilAndDuplicates(t *testing.T) {
	rs := recRS(3)
	owned := recOwned(rs, 2)
	for name, active := range map[string][]*corev1.Pod{
		"nil and repeats":                  {owned[0], nil, owned[1], owned[0], owned[1].DeepCopy()},
		"a copy with the same key, no nil": {owned[0], owned[1], owned[1].DeepCopy()},
		"the same pointer twice, no nil":   {owned[0], owned[1], owned[0]},
	} {
		t.Run(name, func(t *testing.T) {
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
			require.NoError(t, err)
			assert.Equal(t, -1, out.Diff)
			assert.Len(t, pods.creates(), 1)
		})
	}
}

type recCtxKey struct{}

// ctx reaches every PodControl call.
func TestManageReplicasPassesContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		have int
		want int32
	}{{"creates", 0, 3}, {"deletes", 3, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.want)
			pods := &recPods{}
			m := &reconcile.Manager{Pods: pods}
			ctx := context.WithValue(context.Background(), recCtxKey{}, "marker")
			_, err := m.ManageReplicas(ctx, reconcile.ReplicaSetOwner(rs), recOwned(rs, tc.have), nil)
			require.NoError(t, err)
			require.Len(t, pods.ctxs, 3)
			for _, c := range pods.ctxs {
				assert.Equal(t, "marker", c.Value(recCtxKey{}))
			}
		})
	}
}

// A panic in CreatePod reaches the caller after the batch, with the failed
// and skipped creations lowered.
func TestManageReplicasCreatePanic(t *testing.T) {
	rs := recRS(10)
	pods := &recPods{CreateErr: func(_ context.Context, _ *corev1.Pod, call int) error {
		if call == 1 {
			panic("boom")
		}
		return nil
	}}
	m := &reconcile.Manager{Pods: pods}
	assert.PanicsWithValue(t, "boom", func() {
		_, _ = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
	})
	assert.Len(t, pods.creates(), 3, "batch 2 ran to completion")
	// 10 expected; calls 0 and 2 succeeded; call 1 panicked; 7 skipped.
	recPending(t, m, "default/web", 2, 0)
}

// Hooks.Panicked sees the first panicking call's value and the stack of the
// goroutine that panicked, after the expectations were corrected, for
// creates and deletes alike.
func TestManageReplicasPanickedHook(t *testing.T) {
	type seen struct {
		key     string
		value   any
		stack   string
		pending [2]int
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name        string
		replicas    int32
		active      int
		pods        *recPods
		wantPending [2]int
	}{
		{name: "create", replicas: 4, pods: &recPods{CreateErr: func(_ context.Context, _ *corev1.Pod, call int) error {
			if call >= 1 {
				panicInPodControl(boom)
			}
			return nil
		}}, wantPending: [2]int{1, 0}}, // call 0 succeeded; calls 1-2 panicked; call 3 skipped
		{name: "delete", replicas: 0, active: 2, pods: &recPods{DeleteErr: func(_ context.Context, p *corev1.Pod) error {
			panicInPodControl(boom)
			return nil
		}}, wantPending: [2]int{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.replicas)
			var got []seen
			m := &reconcile.Manager{Pods: tc.pods}
			m.Hooks.Panicked = func(key string, v any, stack []byte) {
				a, d, _ := m.Tracker().Pending(key)
				got = append(got, seen{key, v, string(stack), [2]int{a, d}})
			}
			r := func() (r any) {
				defer func() { r = recover() }()
				_, _ = m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), recOwned(rs, tc.active), nil)
				return nil
			}()
			assert.Same(t, boom, r, "the value is re-raised unchanged")
			require.Len(t, got, 1, "called once")
			assert.Equal(t, "default/web", got[0].key)
			assert.Same(t, boom, got[0].value)
			assert.Contains(t, got[0].stack, "reconcile_test.panicInPodControl", "the stack of the goroutine that panicked")
			assert.Equal(t, tc.wantPending, got[0].pending, "expectations corrected before the hook")
		})
	}
}

//go:noinline
func panicInPodControl(v any) { panic(v) }

// The caller's slices and pods are never modified.
func TestManageReplicasLeavesInputsAlone(t *testing.T) {
	clock := fakeclock.New(podtest.Epoch.Add(48 * 3600e9))
	for _, want := range []int32{0, 2, 5, 9} {
		rs := recRS(want)
		active := recOwned(rs, 5, podtest.Ready(podtest.Epoch))
		related := recOwned(rs, 3, podtest.Node("n1"))
		activeCopy, relatedCopy, rsCopy := recDeepCopies(active), recDeepCopies(related), rs.DeepCopy()
		activeOrder := append([]*corev1.Pod(nil), active...)
		m := &reconcile.Manager{Pods: &recPods{}, Clock: clock}
		_, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, related)
		require.NoError(t, err)
		assert.Equal(t, activeOrder, active, "order of active")
		assert.Equal(t, activeCopy, recDeepCopies(active))
		assert.Equal(t, relatedCopy, recDeepCopies(related))
		assert.Equal(t, rsCopy, rs)
	}
}

func recDeepCopies(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

// with EvidenceFirst: creates refused because the namespace is
// terminating count as done, and no pod or event will follow. The cache
// passing the round's other writes must not resolve the round as a missed
// event (which would start another wave of doomed creates): the round waits
// for the TTL, as upstream does. Found on a real control plane.
func TestNamespaceTerminatingRoundIsNotResolvedByEvidence(t *testing.T) {
	clk := fakeclock.New(podtest.Epoch)
	tracker := expectations.New(expectations.Options{
		Clock:  clk,
		Policy: expectations.EvidenceFirst,
		Gate:   expectations.NewGate(expectations.GateOptions{Caches: podsCache(func() string { return "1000" })}), // past every write below
	})
	pods := &recPods{CreateErr: func(_ context.Context, _ *corev1.Pod, call int) error {
		if call == 0 {
			return nil // stored, RV 100
		}
		return recNamespaceTerminating()
	}}
	m := &reconcile.Manager{Pods: pods, Expectations: tracker, Clock: clk, TrackCreations: true}
	out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(recRS(5)), nil, nil)
	require.NoError(t, err)
	require.Equal(t, 4, out.NamespaceTerminating)

	st := tracker.Check("default/web")
	assert.False(t, st.Satisfied, "the refused creates are still expected; evidence cannot settle them")
	assert.Equal(t, expectations.Waiting, st.Resolution)

	clk.Step(expectations.DefaultTTL + time.Nanosecond)
	assert.True(t, tracker.Satisfied("default/web"), "the TTL applies, as upstream")
}
