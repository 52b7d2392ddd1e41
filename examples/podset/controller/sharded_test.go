package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// heldShard runs a sharding.Coordinator of one shard over a fake clientset's
// Leases and returns the shard it holds, and a func that gives it back and
// waits for the Coordinator to return.
func heldShard(t *testing.T) (*sharding.Held, func()) {
	t.Helper()
	coord, err := sharding.NewCoordinator(fake.NewClientset(), sharding.Options{
		Namespace: "kube-system", Name: "podset-test", Identity: "replica-a", Shards: 2,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	held := make(chan *sharding.Held, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		assert.NoError(t, coord.Run(ctx, func(ctx context.Context, h *sharding.Held) error {
			held <- h
			<-ctx.Done()
			return nil
		}))
	})
	h := <-held // one replica takes both shards; either will do
	return h, func() {
		cancel()
		wg.Wait()
	}
}

// uidIn returns an owner UID in s (in) or out of it.
func uidIn(s sharding.Shard, in bool, prefix string) types.UID {
	for i := 0; ; i++ {
		uid := types.UID(fmt.Sprintf("%s-%d", prefix, i))
		if s.Contains(uid) == in {
			return uid
		}
	}
}

// the controller of one held shard (controller.Options.Shard, as
// RunShard builds it) creates the pods of its shard's PodSets, each
// stamped with the owned-pods label and its owner's bucket, and leaves the
// PodSets of other shards alone; once the shard is given back, its fence
// is closed and the controller writes nothing.
func TestShardedControllerCreatesOnlyItsShardsPods(t *testing.T) {
	h, giveBack := heldShard(t)
	shard := h.Shard()
	mine, theirs := podSet(2), podSet(2)
	mine.Name, mine.UID = "mine", uidIn(shard, true, "ps")
	theirs.Name, theirs.UID = "theirs", uidIn(shard, false, "ps")

	owned, err := ctrlruntime.NewOwnedPods(map[string]string{v1alpha1.OwnedLabel: "true"}, false)
	require.NoError(t, err)
	sharded, err := owned.ForShard(shard)
	require.NoError(t, err)
	opts := controller.Options{OwnedPods: sharded, Shard: h}
	env, err := ctrlruntimetest.New(func(cfg reconcile.Config[*v1alpha1.PodSet]) (*controller.Controller, error) {
		return controller.New(cfg, opts)
	}, ctrlruntimetest.Options{
		Scheme:  newScheme(t),
		Objects: []client.Object{mine, theirs},
		Config:  ctrlruntime.ConfigOptions{OwnedPods: sharded},
		Start:   t0,
	})
	require.NoError(t, err)
	env.Enqueue(ns + "/mine")
	env.Enqueue(ns + "/theirs")
	require.NoError(t, env.Settle())

	pods, err := env.Pods(ns)
	require.NoError(t, err)
	require.Len(t, pods, 2, "mine's two pods, none of theirs")
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		require.NotNil(t, ref)
		assert.Equal(t, mine.UID, ref.UID)
		assert.Equal(t, sharding.BucketValue(mine.UID), p.Labels[sharding.BucketLabel], "the bucket of its owner")
		assert.Equal(t, "true", p.Labels[v1alpha1.OwnedLabel], "the owned-pods stamp")
	}

	giveBack()
	require.ErrorIs(t, h.Fence(), sharding.ErrNotHeld)
	var cur v1alpha1.PodSet
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKeyFromObject(mine), &cur))
	cur.Spec.Replicas = ptr(int32(4))
	require.NoError(t, env.Client.Update(t.Context(), &cur))
	_ = env.Settle() // the fence refuses the sync's writes
	pods, err = env.Pods(ns)
	require.NoError(t, err)
	assert.Len(t, pods, 2, "nothing created once the shard is given back")
}
