package ctrlruntimetest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// The Env's Config is ctrlruntime.NewConfig's (issue 41 item 3): the
// consistency gate's CacheVersions and the sync guard are there, the
// resource comes from the client's RESTMapper, and NoCacheVersions does
// what it does in a manager. Before, the Env built a Config of its own
// without CacheVersions.
func TestNewBuildsThroughNewConfig(t *testing.T) {
	var got reconcile.Config[*appsv1.ReplicaSet]
	capture := func(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
		got = cfg
		return newController(cfg)
	}
	_, err := ctrlruntimetest.New(capture, ctrlruntimetest.Options{})
	require.NoError(t, err)
	assert.NotNil(t, got.Cluster.CacheVersions.Pods, "R-10.9: the gate reads the pod cache's version")
	assert.NotNil(t, got.Cluster.CacheVersions.Owners)
	assert.NotNil(t, got.Cluster.CachesSynced, "R-14.8: the sync guard")
	assert.False(t, got.DisableConsistencyGate)
	assert.Equal(t, schema.GroupResource{Group: "apps", Resource: "replicasets"}, got.Cluster.Resource)
	assert.NotNil(t, got.Hooks.CreationsStopped, "R-13.7: the Warning event when creations stop")
	assert.NotNil(t, got.Clock)

	_, err = ctrlruntimetest.New(capture, ctrlruntimetest.Options{Config: ctrlruntime.ConfigOptions{NoCacheVersions: true}})
	require.NoError(t, err)
	assert.NotNil(t, got.Cluster.CachesSynced, "R-14.8: the sync guard stays without versions")
	assert.True(t, got.DisableConsistencyGate, "NoCacheVersions turns the gate off, as in a manager")
}

// A controller built with Expectations.Exact runs on the Env: it failed
// reconcile.NewController before (no CacheVersions.Pods). Exact names the
// pods itself, so they carry no generated name.
func TestExactExpectations(t *testing.T) {
	exact := func(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
		cfg.Expectations.Exact = true
		return newController(cfg)
	}
	env, err := ctrlruntimetest.New(exact, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(3)}})
	require.NoError(t, err)
	require.NoError(t, env.Settle())
	require.Len(t, pods(t, env), 3)
	assert.True(t, env.Controller.Tracker().Satisfied(ns+"/web"))
	scale(t, env, 1)
	require.NoError(t, env.Settle())
	assert.Len(t, pods(t, env), 1)
	assert.True(t, env.Controller.Tracker().Satisfied(ns+"/web"))
}

// on the Env: with StartUnsynced, a reconcile before the first
// list has been delivered is refused and touches nothing; once Deliver has
// delivered it, the same reconcile creates the pods. Before, the Env had
// no sync guard and the first reconcile acted on whatever it read.
func TestStartUnsyncedRefusesToSync(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(2)}, StartUnsynced: true})
	_, err := env.Reconcile(ns + "/web")
	require.ErrorIs(t, err, reconcile.ErrNotSynced)
	assert.ErrorIs(t, err, reconcile.ErrDeferred)
	assert.Empty(t, pods(t, env), "nothing created on an unsynced cache")

	require.NoError(t, env.Deliver())
	_, err = env.Reconcile(ns + "/web")
	require.NoError(t, err)
	assert.Len(t, pods(t, env), 2)
}

// The zero Options start with the caches synced, as a manager's are when
// it starts its workers: the first reconcile acts.
func TestStartsSynced(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(2)}})
	_, err := env.Reconcile(ns + "/web")
	require.NoError(t, err)
	assert.Len(t, pods(t, env), 2)
}

// 2,000 pods of one owner get 2,000 distinct names (issue 41 item 4): the
// Env numbers each generateName's names, where the fake client draws five
// random characters and fails 13% of runs at this size with AlreadyExists
// (the package documentation's birthday bound). The names are the same in
// every run.
func TestGeneratedNamesAtScale(t *testing.T) {
	const n = 2000
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{replicaSet(n)}})
	require.NoError(t, env.Settle())
	got := pods(t, env)
	require.Len(t, got, n)
	names := map[string]bool{}
	for _, p := range got {
		names[p.Name] = true
	}
	assert.Len(t, names, n)
	assert.True(t, names["web-bbbbb"], "the first, number 0")
	assert.True(t, names["web-bbd2c"], "the last, number 1999 = (2·27 + 20)·27 + 1")
	assert.False(t, names["web-bbd2d"], "number 2000 is not used")
}

// A generated name skips a name that is taken, and each prefix is
// numbered on its own.
func TestGeneratedNamesSkipTakenNames(t *testing.T) {
	taken := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-bbbbb"}}
	env := newEnv(t, ctrlruntimetest.Options{Objects: []client.Object{taken}})
	var created []string
	for _, prefix := range []string{"web-", "web-", "db-"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: prefix}}
		require.NoError(t, env.Client.Create(t.Context(), pod))
		created = append(created, pod.Name)
	}
	assert.Equal(t, []string{"web-bbbbc", "web-bbbbd", "db-bbbbb"}, created)

	named := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine", GenerateName: "web-"}}
	require.NoError(t, env.Client.Create(t.Context(), named))
	assert.Equal(t, "mine", named.Name, "a given name is kept")
}

// The suffixes are the counter written in the API server's alphabet
// (27 characters): a few checked by hand.
func TestGeneratedNameSuffixes(t *testing.T) {
	env := newEnv(t, ctrlruntimetest.Options{})
	var got []string
	for range 29 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "p-"}}
		require.NoError(t, env.Client.Create(t.Context(), pod))
		got = append(got, pod.Name)
	}
	assert.Equal(t, "p-bbbbb", got[0])
	assert.Equal(t, "p-bbbb9", got[26], "the alphabet's last character")
	assert.Equal(t, "p-bbbcb", got[27], "then a carry")
	assert.Equal(t, "p-bbbcc", got[28])
}

// The production profile on the Env: NewConfig accepts or refuses it as it
// does for a manager on the same client-go (v0.36 and newer: accepted),
// and the controller it builds stamps its pods and settles.
func TestProductionProfile(t *testing.T) {
	stamp := map[string]string{"example.com/managed-by": "web"}
	prod, err := ctrlruntime.NewProduction(stamp)
	require.NoError(t, err)
	env, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{
		Objects: []client.Object{replicaSet(3)},
		Config:  ctrlruntime.ConfigOptions{Production: prod},
	})
	if !storeversion.Tracked(toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)) {
		require.ErrorContains(t, err, "ConfigOptions.Production needs client-go v0.36 or newer")
		return
	}
	require.NoError(t, err)
	require.NoError(t, env.Settle())
	got := pods(t, env)
	require.Len(t, got, 3)
	for _, p := range got {
		assert.Equal(t, "web", p.Labels["example.com/managed-by"], "every created pod carries the stamp")
	}
}
