package clientgo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
)

// CacheVersions reads the informers' stores: "" before they have synced
// anything, then the version of the latest write they applied, so that the
// consistency gate compares the controller's writes with what the
// listers can return. Before client-go v0.36 the stores track no version:
// "" throughout.
func TestCacheVersions(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
	pods, owners := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	cv := clientgo.CacheVersions(pods, owners)
	require.NotNil(t, cv.Pods)
	require.NotNil(t, cv.Owners)
	assert.Empty(t, cv.Pods(), "nothing synced yet")
	assert.Empty(t, cv.Owners())
	synced := clientgo.CachesSynced(pods, owners)
	require.NotNil(t, synced)
	assert.False(t, synced(), "R-14.8: informers not started have not synced")

	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	waitForCaches(t, ctx, factory)
	assert.True(t, synced(), "R-14.8: both informers have synced")
	rs, err := cl.Clientset.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet("web", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	p, err := cl.Clientset.CoreV1().Pods(ns).Create(ctx, podLike("web-1", rs), metav1.CreateOptions{})
	require.NoError(t, err)
	minor, ok := storeversion.ClientGoMinor()
	require.True(t, ok, "the test binary names its k8s.io/client-go version")
	require.Equal(t, minor >= storeversion.TrackedFrom, storeversion.Tracked(pods.GetStore()),
		"client-go v0.%d: the stores track their version from v0.%d on (the floor of adapters/go.mod: no; make compat's newest: yes)",
		minor, storeversion.TrackedFrom)
	if !storeversion.Tracked(pods.GetStore()) {
		// client-go before v0.36: the stores track no version, and the
		// funcs answer "" however far they have synced (no gate, as
		// upstream on those releases).
		eventually(t, func() bool {
			_, ok, _ := pods.GetIndexer().GetByKey(ns + "/web-1")
			return ok
		}, "the lister returns the pod")
		assert.Empty(t, cv.Pods(), "an untracked store answers \"\"")
		assert.Empty(t, cv.Owners())
		return
	}
	eventually(t, func() bool { return cv.Pods() == p.ResourceVersion }, "the pod store reaches the pod's create")
	eventually(t, func() bool { return cv.Owners() == rs.ResourceVersion }, "the ReplicaSet store reaches its create")
	_, listed, _ := pods.GetIndexer().GetByKey(ns + "/web-1")
	assert.True(t, listed, "the version has passed: the lister returns the pod")
}

// A nil informer gives a nil func: that cache never holds a sync back, and
// CachesSynced reads only the informers given (none: nil, which
// NewController refuses).
func TestCacheVersionsNilInformers(t *testing.T) {
	cv := clientgo.CacheVersions(nil, nil)
	assert.Nil(t, cv.Pods)
	assert.Nil(t, cv.Owners)
	assert.Nil(t, clientgo.CachesSynced(nil, nil))

	cl := fakecluster.New(1, fakecluster.Faults{})
	factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
	pods := factory.Core().V1().Pods().Informer()
	cv = clientgo.CacheVersions(pods, nil)
	assert.Nil(t, cv.Owners)
	synced := clientgo.CachesSynced(pods, nil)
	require.NotNil(t, synced)
	assert.False(t, synced())
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	waitForCaches(t, ctx, factory)
	assert.True(t, synced(), "the pods informer alone decides")
}

// ReplicaSets wires the gate as upstream v1.37 has it: on, with both
// stores' versions, status writes recorded under apps/replicasets.
func TestReplicaSetsWiresTheGate(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	factory := informers.NewSharedInformerFactory(cl.Clientset, 0)
	cfg := clientgo.ReplicaSets(cl.Clientset, factory, nil)
	assert.Equal(t, schema.GroupResource{Group: "apps", Resource: "replicasets"}, cfg.Cluster.Resource)
	assert.NotNil(t, cfg.Cluster.CacheVersions.Pods)
	assert.NotNil(t, cfg.Cluster.CacheVersions.Owners)
	assert.NotNil(t, cfg.Cluster.CachesSynced, "R-14.8: no sync before the informers have synced")
	assert.False(t, cfg.DisableConsistencyGate)
}

func podLike(name string, rs *appsv1.ReplicaSet) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: rs.Spec.Template.Labels},
		Spec:       rs.Spec.Template.Spec,
	}
}
