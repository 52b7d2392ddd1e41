package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// A shard's controller on a ReplicaSet informer shared by the shards a
// replica holds (RunSharded, owners filtered on the client) is given only
// its shard's ReplicaSets, counts its caches synced once its handler has
// had the informer's ReplicaSets, and leaves nothing on the informer once
// it has removed its handler (Run does when it returns).
func TestShardControllersShareOneOwnerInformer(t *testing.T) {
	shard := sharding.Shard{Index: 0, Count: 2}
	var mine, others []*appsv1.ReplicaSet
	for i := 0; len(mine) < 3 || len(others) < 3; i++ {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: "web-" + strconv.Itoa(i), UID: types.UID("uid-" + strconv.Itoa(i))}}
		if shard.Contains(rs.UID) {
			mine = append(mine, rs)
		} else {
			others = append(others, rs)
		}
	}
	client := fake.NewClientset()
	for _, rs := range []*appsv1.ReplicaSet{mine[0], mine[1], others[0], others[1]} {
		_, err := client.AppsV1().ReplicaSets("test").Create(t.Context(), rs, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	// The controller itself, on informers of its own (unsharded), and the
	// shard's handler on a shared factory's informers.
	own := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, own, Options{})
	require.NoError(t, err)
	shared := informers.NewSharedInformerFactory(client, 0)
	rsInf := shared.Apps().V1().ReplicaSets().Informer()
	podInf := shared.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer shared.Shutdown() // after cancel: it waits for the informers to stop
	defer cancel()
	shared.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), rsInf.HasSynced, podInf.HasSynced))
	for c.queue.Len() > 0 { // the unsharded handler's keys: not what is tested
		key, _ := c.queue.Get()
		c.queue.Done(key)
	}

	require.NoError(t, c.registerShard(podInf, rsInf, shard), "on a started informer")
	require.True(t, cache.WaitForCacheSync(ctx.Done(), c.synced...))
	assert.ElementsMatch(t, []string{"test/" + mine[0].Name, "test/" + mine[1].Name}, drain(c), "the shard's ReplicaSets only")

	_, err = client.AppsV1().ReplicaSets("test").Create(t.Context(), others[2], metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.AppsV1().ReplicaSets("test").Create(t.Context(), mine[2], metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.queue.Len() > 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"test/" + mine[2].Name}, drain(c), "a new ReplicaSet of another shard is not the shard's")

	c.unregister()
	assert.False(t, rsInf.IsStopped(), "the shared informer runs on")
	require.NoError(t, client.AppsV1().ReplicaSets("test").Delete(t.Context(), mine[0].Name, metav1.DeleteOptions{}))
	other := mine[0].DeepCopy()
	other.Name, other.ResourceVersion = "web-late", ""
	_, err = client.AppsV1().ReplicaSets("test").Create(t.Context(), other, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok, _ := rsInf.GetStore().GetByKey("test/web-late"); return ok }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, c.queue.Len(), "no event reaches a shard's controller after its handler is removed")
}

// drain returns the keys queued, in any order, and empties the queue.
func drain(c *Controller) []string {
	var keys []string
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		keys = append(keys, key)
		c.queue.Done(key)
		c.queue.Forget(key)
	}
	return keys
}

// The first sync a shard's caches let through is logged once, with the
// resume version, how many syncs the gate deferred before it and how long
// after the first of them it started; every report still reaches the
// caller's OnSync.
func TestLogFirstSync(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	var reports []string
	onSync := logFirstSync(log, "42", func(r Report) { reports = append(reports, r.Key) })
	t0 := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	onSync(Report{Key: "test/a", Start: t0.Add(time.Second), Err: fmt.Errorf("deferred: %w", reconcile.ErrNotSynced)})
	onSync(Report{Key: "test/a", Start: t0, Err: fmt.Errorf("deferred: %w", reconcile.ErrNotSynced)})
	assert.Empty(t, lines, "a deferred sync is not the first")
	onSync(Report{Key: "test/b", Start: t0.Add(2500 * time.Millisecond), Err: errors.New("conflict"), Duration: 1500 * time.Millisecond})
	onSync(Report{Key: "test/c", Start: t0.Add(3 * time.Second)})
	assert.Equal(t, []string{`"level"=0 "msg"="First sync of the shard" "resume"="42" "key"="test/b" "took"="1.5s" "deferred"=2 "sinceFirstTry"="2.5s"`}, lines,
		"once, at the first sync not deferred, failed or not, 2.5 s after the earliest start")
	assert.Equal(t, []string{"test/a", "test/a", "test/b", "test/c"}, reports)

	lines = nil
	assert.NotPanics(t, func() { logFirstSync(log, "", nil)(Report{Key: "test/d", Start: t0}) }, "no OnSync of the caller's")
	assert.Equal(t, []string{`"level"=0 "msg"="First sync of the shard" "resume"="" "key"="test/d" "took"="0s" "deferred"=0 "sinceFirstTry"="0s"`}, lines)
}
