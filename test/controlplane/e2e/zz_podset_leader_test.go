package e2e_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestPodSetLeaderElection is TestReplicaSetLeaderElection for the
// controller-runtime example (examples/podset: the manager's leader
// election on a fenced Lease lock, released on SIGTERM): two replicas on
// one PodSet of their own namespace (-namespace), short leases, in three
// phases. The leader is killed in the middle of 0 → 20: the other takes
// over and converges, and every pod ever created is one of the final 20.
// The new leader gets SIGTERM: it releases the lease, which the other
// (restarted) replica takes. The leader is paused (SIGSTOP) in the middle
// of 20 → 30 and resumed (SIGCONT) once the other replica leads and the
// PodSet converged: the resumed replica writes nothing and exits.
func TestPodSetLeaderElection(t *testing.T) {
	t.Parallel()
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, ctx, dyn)
	_, podset := buildControllers(t)
	e := &haEnv{rsEnv: &rsEnv{t: t, ctx: ctx, cp: cp, client: client}, lease: "e2e-podset-ha", bin: podset}
	e.ns = newNamespace(t, ctx, client)
	e.pods = watchPods(t, ctx, client, e.ns)
	psc := dyn.Resource(podSetGVR).Namespace(e.ns)
	const name = "ha"
	const owner = "PodSet/" + name
	scale := func(n int) {
		t.Helper()
		e.pods.allow(owner, n) // the pod watch fails the test on more than n live pods
		_, err := psc.Patch(ctx, name, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	converge := func(n int64) {
		t.Helper()
		waitPodSet(t, ctx, psc, e.pods, name, n)
	}
	// The first leader creates pods slowly (5 a second), so that the
	// scale-up is still under way when it is stopped.
	slow := []string{"-qps=5", "-burst=1"}

	// Phase 1: SIGKILL the leader during 0 → 20.
	a1 := e.replica(haUserA, "a1", slow...)
	e.waitLeads("a1")
	b1 := e.replica(haUserB, "b1")
	e.waitWaiting(b1)
	e.pods.allow(owner, 20)
	_, err := psc.Create(ctx, newPodSet(name, 20), metav1.CreateOptions{})
	require.NoError(t, err)
	e.waitAtLeast(owner, 3)
	a1.kill()
	killed := time.Now()
	e.waitLeads("b1")
	converge(20)
	assert.Len(t, e.pods.everOwnedBy(owner), 20, "pods created: none above desired")
	t.Logf("phase 1: b1 converged %v after a1 was killed", time.Since(killed).Round(100*time.Millisecond))

	// Phase 2: SIGTERM to the leader: it releases the lease, a2 takes it.
	a2 := e.replica(haUserA, "a2", slow...)
	e.waitWaiting(a2)
	e.handOver(b1, "a2")

	// Phase 3: SIGSTOP the leader (a2, slow) during 20 → 30, SIGCONT once
	// b2 leads and the PodSet converged: a2 makes no write and exits.
	b2 := e.replica(haUserB, "b2")
	e.waitWaiting(b2)
	scale(30)
	e.waitAtLeast(owner, 22)
	require.NoError(t, a2.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = a2.cmd.Process.Signal(syscall.SIGCONT) }) // runs before startProc's stop
	paused := time.Now()
	e.waitLeads("b2")
	converge(30)
	resumed := time.Now()
	require.NoError(t, a2.cmd.Process.Signal(syscall.SIGCONT))
	waitFor(t, ctx, time.Minute, "a2 exiting on its lost lease", func(context.Context) (bool, string, error) {
		return a2.exited(), "", nil
	})
	assert.Error(t, a2.err, "a2's exit status after losing the lease")
	converge(30)
	time.Sleep(time.Second) // kube-apiserver logs a request after answering it
	t.Logf("phase 3: a2 paused for %v", resumed.Sub(paused).Round(100*time.Millisecond))
	assert.Zero(t, e.writesAfter(haUserA, resumed), "a2's writes after SIGCONT")
	assert.Len(t, e.pods.everOwnedBy(owner), 30, "pods created in all: none above desired, none replaced")
	assert.False(t, b2.exited(), "b2 exited")
}

// waitPodSet waits until the PodSet name has n live pods and its status says
// so for its current generation (n replicas, all ready and available, none
// terminating).
func waitPodSet(t *testing.T, ctx context.Context, psc dynamic.ResourceInterface, pods *podWatch, name string, n int64) {
	t.Helper()
	waitFor(t, ctx, convergeTimeout, fmt.Sprintf("PodSet %s with %d pods", name, n), func(ctx context.Context) (bool, string, error) {
		ps, err := psc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		st, _, _ := unstructured.NestedMap(ps.Object, "status")
		num := func(f string) int64 { v, _, _ := unstructured.NestedInt64(st, f); return v }
		live := len(pods.live("PodSet/" + name))
		ok := num("observedGeneration") == ps.GetGeneration() && num("replicas") == n &&
			num("readyReplicas") == n && num("availableReplicas") == n &&
			num("terminatingReplicas") == 0 && live == int(n)
		return ok, fmt.Sprintf("generation %d, status %v, live pods %d", ps.GetGeneration(), st, live), nil
	})
}
