package e2e_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// TestPodSetSharded is TestReplicaSetSharded's hand-over for the
// controller-runtime example (examples/podset -shards 2: leader election
// off, a controller-runtime cluster per held shard, the PodSets filtered
// client-side): two replicas, the first slow, over four PodSets of one
// namespace scaled 0 → 10; the slow one gets SIGTERM in the middle of the
// scale-up and gives its shards back to the other, which converges them.
// No PodSet ever has more live pods than desired, and every pod created is
// one of the final ten.
func TestPodSetSharded(t *testing.T) {
	t.Parallel()
	cp := sharedControlPlane(t)
	_, podset := buildControllers(t)
	e := &shardedEnv{haEnv: &haEnv{rsEnv: newHAEnv(t, cp), bin: podset}, shards: 2}
	e.lease = "e2e-podset-shards-" + e.ns
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, e.ctx, dyn)
	psc := dyn.Resource(podSetGVR).Namespace(e.ns)
	names := []string{"p0", "p1", "p2", "p3"}

	a := e.replica(haUserA, "a", "-qps=5", "-burst=1")
	b := e.replica(haUserB, "b")
	e.waitHeld("a", "b")
	for _, n := range names {
		e.pods.allow("PodSet/"+n, 10) // the pod watch fails the test on more live pods
		_, err := psc.Create(e.ctx, newPodSet(n, 10), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	e.waitAtLeast("PodSet/p0", 1)
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	termed := time.Now()
	e.waitHeld("b")
	t.Logf("a's shards held by b %v after its SIGTERM", time.Since(termed).Round(100*time.Millisecond))
	waitFor(t, e.ctx, time.Minute, "a exiting on SIGTERM", func(context.Context) (bool, string, error) {
		return a.exited(), "", nil
	})
	for _, n := range names {
		waitPodSet(t, e.ctx, psc, e.pods, n, 10)
		assert.Len(t, e.pods.everOwnedBy("PodSet/"+n), 10, "pods created for %s: none above desired, none replaced", n)
	}
	_ = b
}
