package clientgo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
)

// storesTracked reports whether this build's client-go informer stores
// track their resourceVersion (v0.36 and newer, AtomicFIFO on): the floor
// of the adapters' range (make unit) does not, the newest (make compat)
// does.
func storesTracked() bool {
	return storeversion.Active()
}

func mustProduction(t *testing.T) clientgo.Production {
	t.Helper()
	prod, err := clientgo.NewProduction(stamp)
	require.NoError(t, err)
	return prod
}

// NewProduction needs a stamp, a valid label set.
func TestNewProductionRefusesABadStamp(t *testing.T) {
	_, err := clientgo.NewProduction(nil)
	require.ErrorContains(t, err, "clientgo: NewProduction: no stamp")
	_, err = clientgo.NewProduction(map[string]string{"not a key": "x"})
	require.ErrorContains(t, err, "clientgo: NewProduction: ")
}

// NewConfig with the profile: on client-go v0.36 and newer it turns on
// exact expectations, status coalescing, the stamp and one event per
// batch; before v0.36, whose stores track no version, it refuses instead
// of letting Exact fall back to the TTL unseen.
func TestNewConfigWithProduction(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	prod := mustProduction(t)
	apps := newWebApps()
	cfg, err := clientgo.NewConfig(cl.Clientset, prod.Factory(cl.Clientset, 0), apps.Kind(apps.Informer()), clientgo.ConfigOptions{Production: prod})
	if !storesTracked() {
		require.ErrorContains(t, err, "clientgo: NewConfig: ConfigOptions.Production needs client-go v0.36 or newer")
		return
	}
	require.NoError(t, err)
	assert.True(t, cfg.Expectations.Exact)
	assert.Equal(t, 3*time.Second, cfg.StatusInterval)
	assert.False(t, cfg.DisableConsistencyGate)
	pc, ok := cfg.Cluster.PodClient.(clientgo.PodControl)
	require.True(t, ok)
	assert.Equal(t, stamp, pc.Labels)
	assert.True(t, pc.EventPerBatch)
}

// The profile is refused with any pod factory but its own, whatever the
// client-go release: a shared factory (every pod, whole), the OwnedPods
// factory of the same stamp (not lean), another profile's factory.
func TestNewConfigProductionRefusesAnotherFactory(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	prod := mustProduction(t)
	owned, err := clientgo.NewOwnedPods(stamp, true)
	require.NoError(t, err)
	other, err := clientgo.NewProduction(map[string]string{stampKey: "other"})
	require.NoError(t, err)
	for name, factory := range map[string]informers.SharedInformerFactory{
		"shared":          plainFactory(cl.Clientset),
		"OwnedPods":       owned.Factory(cl.Clientset, 0),
		"another profile": other.Factory(cl.Clientset, 0),
		"zero profile":    clientgo.Production{}.Factory(cl.Clientset, 0),
	} {
		t.Run(name, func(t *testing.T) {
			apps := newWebApps()
			_, err := clientgo.NewConfig(cl.Clientset, factory, apps.Kind(apps.Informer()), clientgo.ConfigOptions{Production: prod})
			require.ErrorContains(t, err, "clientgo: NewConfig: ConfigOptions.Production needs the pods' informer factory from the same Production's Factory")
		})
	}
}

// The zero Production turns nothing on, and its Factory selects every
// pod, as upstream.
func TestZeroProduction(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	apps := newWebApps()
	cfg, err := clientgo.NewConfig(cl.Clientset, clientgo.Production{}.Factory(cl.Clientset, 0), apps.Kind(apps.Informer()), clientgo.ConfigOptions{})
	require.NoError(t, err)
	assert.False(t, cfg.Expectations.Exact)
	assert.Zero(t, cfg.StatusInterval)
	pc, ok := cfg.Cluster.PodClient.(clientgo.PodControl)
	require.True(t, ok)
	assert.Nil(t, pc.Labels)
	assert.False(t, pc.EventPerBatch)
}

// The profile end to end (client-go v0.36 and newer; before, NewConfig
// refuses it, TestNewConfigWithProduction): a WebApp scaled up and down on
// the fake cluster, every pod it creates stamped, and the pod
// informer owned-only and lean: a pod without the stamp never
// reaches it, the stamped ones are reduced to what the rules read.
func TestProductionScalesOwnedPods(t *testing.T) {
	if !storesTracked() {
		t.Skip("client-go before v0.36: NewConfig refuses the profile (TestNewConfigWithProduction)")
	}
	prod := mustProduction(t)
	e := startWebApps(t, func(client kubernetes.Interface) informers.SharedInformerFactory { return prod.Factory(client, 0) },
		clientgo.ConfigOptions{Production: prod})
	stranger := ownedPod("stranger", map[string]string{"app": "web"}) // an orphan the WebApp selects, not stamped
	stranger.OwnerReferences = nil
	_, err := e.cluster.Clientset.CoreV1().Pods(ns).Create(context.Background(), stranger, metav1.CreateOptions{})
	require.NoError(t, err)

	e.apps.Create(webApp("web", 3))
	eventually(t, func() bool { return len(e.podsOf(t, stampKey+"=rs-controller")) == 3 }, "3 stamped pods")
	e.apps.Scale(ns, "web", 1)
	eventually(t, func() bool { return len(e.podsOf(t, stampKey+"=rs-controller")) == 1 }, "1 stamped pod after the scale-down")

	assert.Len(t, e.podsOf(t, "app=web"), 2, "the stranger is never adopted nor deleted: the controller does not see it")
	_, ok, err := e.pods.GetIndexer().GetByKey(ns + "/stranger")
	require.NoError(t, err)
	assert.False(t, ok, "the pod informer holds no unstamped pod")
	for _, obj := range e.pods.GetIndexer().List() {
		pod := obj.(*corev1.Pod)
		assert.Equal(t, "rs-controller", pod.Labels[stampKey])
		assert.Empty(t, pod.Spec.Containers, "lean: the containers are not kept")
	}
}
