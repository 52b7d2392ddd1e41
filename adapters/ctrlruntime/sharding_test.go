package ctrlruntime_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// a shard's pod cache selects the pods stamped with the shard's
// buckets, ANDed with the owned-only stamp and the selectors the options
// already had; the stamp itself is unchanged (sharding.WrapCluster's pod
// client adds the bucket), and the OwnedPods it came from is not modified.
func TestOwnedPodsForShardCacheOptions(t *testing.T) {
	shard := sharding.Shard{Index: 1, Count: 4} // buckets 40 to 7f
	bucketed := func(bucket string) labels.Set {
		return labels.Set{stampKey: "podset", "app": "web", sharding.BucketLabel: bucket}
	}

	cases := []struct {
		name   string
		stamp  map[string]string
		opts   cache.Options
		label  string
		admits labels.Set
	}{{
		name:   "owned pods",
		stamp:  stamp,
		label:  stampKey + "=podset," + shard.PodSelector(),
		admits: bucketed("40"),
	}, {
		name:   "zero OwnedPods: the shard's pods among every pod",
		label:  shard.PodSelector(),
		admits: labels.Set{sharding.BucketLabel: "7f"},
	}, {
		name:   "a default label selector the stamp meets is kept",
		stamp:  map[string]string{stampKey: "podset", "team": "a"},
		opts:   cache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"team": "a"})},
		label:  stampKey + "=podset," + shard.PodSelector() + ",team=a",
		admits: labels.Set{stampKey: "podset", "team": "a", sharding.BucketLabel: "55"},
	}, {
		name:   "the pod entry's own selector, without a stamp",
		opts:   cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.Everything(), Transform: ctrlruntime.LeanPods}}},
		label:  shard.PodSelector(),
		admits: labels.Set{sharding.BucketLabel: "40"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			owned, err := ctrlruntime.NewOwnedPods(c.stamp, false)
			require.NoError(t, err)
			sharded, err := owned.ForShard(shard)
			require.NoError(t, err)
			assert.Equal(t, owned.Labels(), sharded.Labels(), "the stamp is unchanged")

			got, err := sharded.CacheOptions(c.opts)
			require.NoError(t, err)
			b := podEntry(t, got)
			assert.Equal(t, c.label, b.Label.String())
			assert.True(t, b.Label.Matches(c.admits))
			for _, other := range []string{"3f", "80", "00"} {
				set := labels.Merge(c.admits, labels.Set{sharding.BucketLabel: other})
				assert.False(t, b.Label.Matches(set), "bucket %s is another shard's", other)
			}
			unstamped := labels.Merge(c.admits, nil)
			delete(unstamped, sharding.BucketLabel)
			assert.False(t, b.Label.Matches(unstamped), "a pod without the bucket label is Unsharded's")

			plain, err := owned.CacheOptions(c.opts)
			require.NoError(t, err)
			if len(plain.ByObject) > 0 {
				assert.NotContains(t, podEntry(t, plain).Label.String(), sharding.BucketLabel, "owned is not modified")
			}
		})
	}

	// The field selectors stay: finished pods out, -namespace's ANDed in.
	owned, err := ctrlruntime.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	sharded, err := owned.ForShard(shard)
	require.NoError(t, err)
	got, err := sharded.CacheOptions(cache.Options{DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", ns)})
	require.NoError(t, err)
	b := podEntry(t, got)
	assert.True(t, b.Field.Matches(fields.Set{"status.phase": "Running", "metadata.namespace": ns}))
	assert.False(t, b.Field.Matches(fields.Set{"status.phase": "Failed", "metadata.namespace": ns}))
	assert.False(t, b.Field.Matches(fields.Set{"status.phase": "Running", "metadata.namespace": "other"}))

	// A label selector the stamp does not meet is still refused.
	_, err = sharded.CacheOptions(cache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"canary": "true"})})
	assert.ErrorContains(t, err, "ctrlruntime: OwnedPods.CacheOptions:")
}

// Unsharded selects the pods without the bucket label (made before
// sharding was turned on), for the cache that feeds sharding.Unstamped.
func TestOwnedPodsUnshardedSelectsNoShard(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(stamp, false)
	require.NoError(t, err)
	for name, c := range map[string]struct {
		owned ctrlruntime.OwnedPods
		label string
	}{
		"owned pods":     {owned.Unsharded(), stampKey + "=podset," + sharding.UnstampedSelector()},
		"zero OwnedPods": {ctrlruntime.OwnedPods{}.Unsharded(), sharding.UnstampedSelector()},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := c.owned.CacheOptions(cache.Options{})
			require.NoError(t, err)
			b := podEntry(t, got)
			assert.Equal(t, c.label, b.Label.String())
			assert.True(t, b.Label.Matches(labels.Set{stampKey: "podset"}))
			assert.False(t, b.Label.Matches(labels.Set{stampKey: "podset", sharding.BucketLabel: "00"}))
		})
	}
}

// An invalid shard is an error, for OwnedPods and Production alike.
func TestForShardRefusesAnInvalidShard(t *testing.T) {
	owned, err := ctrlruntime.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	for name, s := range map[string]sharding.Shard{
		"zero Shard":         {},
		"index past count":   {Index: 2, Count: 2},
		"negative index":     {Index: -1, Count: 4},
		"more than buckets":  {Index: 0, Count: sharding.Buckets + 1},
		"no count, an index": {Index: 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := owned.ForShard(s)
			assert.ErrorContains(t, err, "ctrlruntime: OwnedPods.ForShard: sharding:")
			_, err = mustProduction(t).ForShard(s)
			assert.ErrorContains(t, err, "ctrlruntime: Production.ForShard:")
		})
	}
}

// Production.ForShard: the profile's cache (stamped, unfinished, lean pods)
// restricted to the shard's buckets; NewConfig takes it with the shard's
// OwnedPods or none, and refuses another shard's. The zero Production stays
// zero.
func TestProductionForShard(t *testing.T) {
	shard := sharding.Shard{Index: 0, Count: 2}
	prod, err := mustProduction(t).ForShard(shard)
	require.NoError(t, err)
	got, err := prod.CacheOptions(cache.Options{})
	require.NoError(t, err)
	b := podEntry(t, got)
	assert.Equal(t, "example.com/managed-by=web,"+shard.PodSelector(), b.Label.String())
	assert.NotNil(t, b.Transform, "lean pods")
	assert.False(t, b.Field.Matches(fields.Set{"status.phase": "Succeeded"}))

	unsharded := mustProduction(t).Unsharded()
	got, err = unsharded.CacheOptions(cache.Options{})
	require.NoError(t, err)
	assert.Equal(t, "example.com/managed-by=web,"+sharding.UnstampedSelector(), podEntry(t, got).Label.String())

	zero, err := ctrlruntime.Production{}.ForShard(shard)
	require.NoError(t, err)
	assert.Equal(t, ctrlruntime.Production{}, zero)
	assert.Equal(t, ctrlruntime.Production{}, ctrlruntime.Production{}.Unsharded())

	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	owned, err := ctrlruntime.NewOwnedPods(prodStamp, true)
	require.NoError(t, err)
	sameShard, err := owned.ForShard(shard)
	require.NoError(t, err)
	otherShard, err := owned.ForShard(sharding.Shard{Index: 1, Count: 2})
	require.NoError(t, err)
	_, err = ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil,
		ctrlruntime.ConfigOptions{Production: prod, OwnedPods: otherShard})
	require.ErrorContains(t, err, "ConfigOptions.OwnedPods differs from ConfigOptions.Production's stamp")
	if !storesTracked() {
		return // the profile needs versioned stores: TestNewConfigWithProduction
	}
	for _, o := range []ctrlruntime.OwnedPods{{}, sameShard} {
		cfg, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil,
			ctrlruntime.ConfigOptions{Production: prod, OwnedPods: o})
		require.NoError(t, err)
		pc, ok := cfg.Cluster.PodClient.(ctrlruntime.PodControl)
		require.True(t, ok)
		assert.Equal(t, prodStamp, pc.Labels, "the stamp has no bucket: WrapCluster's pod client adds it")
	}
}

// NewClusterConfig builds NewConfig's Config from a cluster.Cluster no
// manager owns (not started here: nothing is contacted); it needs a
// recorder, since no manager runs a broadcaster for it.
func TestNewClusterConfigOfAShardCluster(t *testing.T) {
	cl, err := cluster.New(&rest.Config{Host: "http://127.0.0.1:1"}, func(o *cluster.Options) {
		o.Scheme = scheme(t)
		o.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper(), nil }
	})
	require.NoError(t, err)

	_, err = ctrlruntime.NewClusterConfig[*appsv1.ReplicaSet](cl, ctrlruntime.ConfigOptions{})
	require.ErrorContains(t, err, "ctrlruntime: NewClusterConfig: ConfigOptions.Recorder is required")
	_, err = ctrlruntime.NewClusterConfig[*appsv1.ReplicaSet](nil, ctrlruntime.ConfigOptions{Recorder: record.NewFakeRecorder(1)})
	require.ErrorContains(t, err, "ctrlruntime: NewClusterConfig: nil cluster")

	owned, err := ctrlruntime.NewOwnedPods(stamp, false)
	require.NoError(t, err)
	cfg, err := ctrlruntime.NewClusterConfig[*appsv1.ReplicaSet](cl, ctrlruntime.ConfigOptions{Recorder: record.NewFakeRecorder(1), OwnedPods: owned})
	require.NoError(t, err)
	assert.Equal(t, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), cfg.Kind)
	pc, ok := cfg.Cluster.PodClient.(ctrlruntime.PodControl)
	require.True(t, ok)
	assert.Equal(t, stamp, pc.Labels)
	assert.NotNil(t, cfg.Cluster.CacheVersions.Pods, "the cluster's cache gives the gate its versions")
	require.NoError(t, ctrlruntime.AddIndexes[*appsv1.ReplicaSet](t.Context(), cl.GetCache()))
}
