package ctrlruntime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

var prodStamp = map[string]string{"example.com/managed-by": "web"}

// storesTracked reports whether this build's client-go informer stores
// track their resourceVersion (v0.36 and newer): the floor of the adapters'
// range (make unit) does not, the newest (make compat) does.
func storesTracked() bool {
	return storeversion.Tracked(toolscache.NewStore(toolscache.MetaNamespaceKeyFunc))
}

func mustProduction(t *testing.T) ctrlruntime.Production {
	t.Helper()
	prod, err := ctrlruntime.NewProduction(prodStamp)
	require.NoError(t, err)
	return prod
}

// NewProduction needs a stamp, a valid label set.
func TestNewProductionRefusesABadStamp(t *testing.T) {
	_, err := ctrlruntime.NewProduction(nil)
	require.ErrorContains(t, err, "ctrlruntime: NewProduction: no stamp")
	_, err = ctrlruntime.NewProduction(map[string]string{"not a key": "x"})
	require.ErrorContains(t, err, "ctrlruntime: NewProduction: ")
}

// The profile's cache: stamped, unfinished pods, reduced to lean
// pods after the transform the options already had; opts not modified.
func TestProductionCacheOptions(t *testing.T) {
	var prevCalls int
	prev := func(obj any) (any, error) {
		prevCalls++
		return obj, nil
	}
	in := cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: prev}}}
	out, err := mustProduction(t).CacheOptions(in)
	require.NoError(t, err)
	assert.Nil(t, in.ByObject[podKeyOf(in)].Label, "the caller's options are not modified")

	by := out.ByObject[podKeyOf(out)]
	assert.True(t, by.Label.Matches(labels.Set(prodStamp)), "stamped pods are selected")
	assert.False(t, by.Label.Matches(labels.Set{"app": "web"}), "unstamped pods are not")
	assert.False(t, by.Field.Matches(fields.Set{"status.phase": string(corev1.PodSucceeded)}), "finished pods are dropped")

	full := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	got, err := by.Transform(full)
	require.NoError(t, err)
	want, err := ctrlruntime.LeanPods(full)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the pods are lean")
	assert.Equal(t, 1, prevCalls, "the options' own transform ran first")

	zero, err := ctrlruntime.Production{}.CacheOptions(in)
	require.NoError(t, err)
	assert.Equal(t, in, zero, "the zero Production changes nothing")
}

// podKeyOf returns the pod key of opts.ByObject.
func podKeyOf(opts cache.Options) client.Object {
	for obj := range opts.ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			return obj
		}
	}
	return nil
}

// NewConfig with the profile: on client-go v0.36 and newer it turns on
// exact expectations, status coalescing, the stamp and one event per
// batch; before v0.36, whose stores track no version, it refuses instead
// of letting Exact fall back to the TTL unseen.
func TestNewConfigWithProduction(t *testing.T) {
	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	cfg, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{Production: mustProduction(t)})
	if !storesTracked() {
		require.ErrorContains(t, err, "ctrlruntime: NewConfig: ConfigOptions.Production needs client-go v0.36 or newer")
		return
	}
	require.NoError(t, err)
	assert.True(t, cfg.Expectations.Exact)
	assert.Equal(t, 3*time.Second, cfg.StatusInterval)
	assert.False(t, cfg.DisableConsistencyGate)
	pc, ok := cfg.Cluster.PodClient.(ctrlruntime.PodControl)
	require.True(t, ok)
	assert.Equal(t, prodStamp, pc.Labels)
	assert.True(t, pc.EventPerBatch)
	_, err = reconcile.NewController(withReplicaSetLogic(cfg))
	require.NoError(t, err)
}

// The profile is refused where it cannot be honoured, naming why; the zero
// Production changes nothing.
func TestNewConfigProductionRefusals(t *testing.T) {
	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	prod := mustProduction(t)
	_, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil,
		ctrlruntime.ConfigOptions{Production: prod, NoCacheVersions: true})
	require.ErrorContains(t, err, "ConfigOptions.Production with NoCacheVersions")

	other, err := ctrlruntime.NewOwnedPods(map[string]string{"example.com/other": "x"}, true)
	require.NoError(t, err)
	_, err = ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil,
		ctrlruntime.ConfigOptions{Production: prod, OwnedPods: other})
	require.ErrorContains(t, err, "ConfigOptions.OwnedPods differs from ConfigOptions.Production's stamp")

	plain, err := ctrlruntime.NewConfigFrom[*appsv1.ReplicaSet](c, c, newCache(t, cache.Options{}), s, nil, ctrlruntime.ConfigOptions{})
	require.NoError(t, err)
	assert.False(t, plain.Expectations.Exact, "the zero options stay upstream's")
	assert.Zero(t, plain.StatusInterval)
	assert.False(t, errors.Is(err, reconcile.ErrClusterScoped))
}

// withReplicaSetLogic fills cfg's Describe and Status with upstream's.
func withReplicaSetLogic(cfg reconcile.Config[*appsv1.ReplicaSet]) reconcile.Config[*appsv1.ReplicaSet] {
	rs := reconcile.ReplicaSets()
	cfg.Describe, cfg.Status = rs.Describe, rs.Status
	return cfg
}
