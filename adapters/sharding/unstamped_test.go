package sharding_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

func TestNewUnstampedNil(t *testing.T) {
	u, err := sharding.NewUnstamped(nil)
	require.ErrorContains(t, err, "sharding: NewUnstamped: nil informer")
	assert.Nil(t, u)
}

// stampPatch is what Stamp sends: a strategic-merge patch of the UID (the
// precondition) and the bucket label.
type stampPatch struct {
	Metadata struct {
		UID    types.UID         `json:"uid"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

// Stamp patches the unstamped pods of the held shard's owners, and only
// them, with their owner's bucket and the pod's UID, and counts them.
func TestStampPatchesTheShardsUnstampedPods(t *testing.T) {
	in, out := uidsIn(half, true, "owner", 2), uidsIn(half, false, "owner", 1)
	a, b := podOf(ns, "a", in[0], map[string]string{"app": "web"}), podOf("elsewhere", "b", in[1], nil)
	u, _, _ := startedUnstamped(t, a, b,
		podOf(ns, "theirs", out[0], nil),
		podOf(ns, "orphan", "", nil),
		podOf(ns, "labeled", in[0], map[string]string{sharding.BucketLabel: sharding.BucketValue(in[0])}),
	)
	h, _ := newHeld("")
	client := &fakePodClient{}
	n, err := u.Stamp(t.Context(), h, client)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	want := map[string]*corev1.Pod{ns + "/a": a, "elsewhere/b": b}
	patches := client.patched()
	require.Len(t, patches, 2)
	for _, p := range patches {
		pod, ok := want[p.pod]
		require.True(t, ok, "patched %s", p.pod)
		delete(want, p.pod)
		var got stampPatch
		require.NoError(t, json.Unmarshal(p.data, &got))
		assert.Equal(t, pod.UID, got.Metadata.UID, "the pod's UID, a precondition")
		owner := pod.OwnerReferences[0].UID
		assert.Equal(t, map[string]string{sharding.BucketLabel: sharding.BucketValue(owner)}, got.Metadata.Labels, "only the bucket label")
	}
	assert.Equal(t, "102", h.WrittenForTest(), "the patches' versions are recorded")
}

// Stamp asks the fence before each patch and stops at its refusal,
// returning it with the count of the pods stamped so far.
func TestStampStopsAtTheFence(t *testing.T) {
	owners := uidsIn(half, true, "owner", 3)
	pods := []*corev1.Pod{podOf(ns, "a", owners[0], nil), podOf(ns, "b", owners[1], nil), podOf(ns, "c", owners[2], nil)}
	t.Run("closed before the first patch", func(t *testing.T) {
		u, _, _ := startedUnstamped(t, pods...)
		h, clk := newHeld("")
		clk.Step(time.Minute)
		client := &fakePodClient{}
		n, err := u.Stamp(t.Context(), h, client)
		require.ErrorIs(t, err, sharding.ErrNotHeld)
		assert.Zero(t, n)
		assert.Empty(t, client.patched())
	})
	t.Run("closed after the first patch", func(t *testing.T) {
		u, _, _ := startedUnstamped(t, pods...)
		h, clk := newHeld("")
		// The first patch takes the fence's whole window.
		client := &fakePodClient{onPatch: func() { clk.Step(time.Minute) }}
		n, err := u.Stamp(t.Context(), h, client)
		require.ErrorIs(t, err, sharding.ErrNotHeld)
		assert.Equal(t, 1, n)
		assert.Len(t, client.patched(), 1, "no patch after the refusal")
	})
}

// A pod gone or replaced meanwhile is skipped, not counted and not an
// error; any other failure stops Stamp and is returned, wrapped.
func TestStampErrors(t *testing.T) {
	owner := uidsIn(half, true, "owner", 1)[0]
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name    string
		err     error
		wantErr bool
	}{
		{name: "NotFound", err: apierrors.NewNotFound(pods, "a")},
		{name: "Conflict (the UID precondition)", err: apierrors.NewConflict(pods, "a", errors.New("uid mismatch"))},
		{name: "Invalid", err: apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "a", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "x", "mismatch")})},
		{name: "InternalError", err: apierrors.NewInternalError(errors.New("boom")), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _, _ := startedUnstamped(t, podOf(ns, "a", owner, nil))
			h, _ := newHeld("")
			client := &fakePodClient{errFor: map[string]error{"a": tc.err}}
			n, err := u.Stamp(t.Context(), h, client)
			assert.Zero(t, n)
			assert.Len(t, client.patched(), 1)
			assert.Empty(t, h.WrittenForTest())
			if !tc.wantErr {
				assert.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, "sharding: stamping pod default/a")
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// The nil *Unstamped (a controller sharded from its first pod) stamps
// nothing.
func TestStampNil(t *testing.T) {
	var u *sharding.Unstamped
	h, _ := newHeld("")
	client := &fakePodClient{}
	n, err := u.Stamp(t.Context(), h, client)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Empty(t, client.patched())
}
