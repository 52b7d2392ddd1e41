package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// The lag scenario of issue 15, scaled down from its 5-minute shape: the
// expectations TTL is gateTTL instead of 5 minutes, the pod watch delay
// gateDelay instead of 340 s, and the ReplicaSet has gatePods pods instead
// of 100.
const (
	gatePods  = 50
	gateTTL   = 10 * time.Second
	gateDelay = 25 * time.Second
	// gateTouchAfter is when the ReplicaSet is touched, after the first
	// pod was seen: past the TTL (the controller expected the creations
	// before it sent the first create), gateDelay-gateTouchAfter before the
	// first delayed pod event reaches the controller.
	gateTouchAfter = gateTTL + 2*time.Second
)

// TestReplicaSetConsistencyGate: the examples' ReplicaSet controller with
// upstream's counted expectations (-exact=false) and a gateTTL expectations
// TTL reaches kube-apiserver through a fault proxy that delays its pod watch
// by gateDelay. A ReplicaSet of gatePods pods is created; once the TTL has
// passed, and long before the delayed pod events arrive, another client
// touches the ReplicaSet (an annotation), which makes the controller sync it
// with expired expectations and a pod cache that has none of its pods yet.
//
//   - gate on (the default, R-10.9): the sync is deferred until the pod
//     cache has caught up with the controller's own creates; exactly
//     gatePods pods are ever created.
//   - gate off (-consistency-gate=false, as upstream before 1.36): the sync
//     trusts the stale cache and creates the whole ReplicaSet again
//     (kubernetes#129795: 2×gatePods pods ever created), then deletes the
//     surplus once the delayed events are released.
//
// Pods are counted by the test's own pod watch, straight to kube-apiserver.
// The two halves run in parallel, each with its own proxy, controller and
// namespace; the gate-on half sets the pace (about gateDelay plus a few
// seconds).
func TestReplicaSetConsistencyGate(t *testing.T) {
	cp := sharedControlPlane(t)
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		r := runGateScenario(t, cp, true)
		assert.Equal(t, gatePods, r.created, "pods ever created with the gate on")
		assert.Positive(t, r.deferred, "the gate deferred no sync: the scenario did not happen as planned")
		assert.Positive(t, r.metrics.sum("replicaset_controller_stale_sync_skips_total", map[string]string{"group": "", "resource": "pods"}),
			"deferrals for the pod cache (upstream's metric)")
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		r := runGateScenario(t, cp, false)
		assert.Greater(t, r.created, gatePods, "pods ever created with the gate off: no over-creation")
		assert.Zero(t, r.deferred, "syncs deferred with the gate off")
		// The touch made the controller sync on expectations past their TTL:
		// the expiry upstream's kubernetes#129795 follows.
		assert.Positive(t, r.metrics.sum("reconcilekit_expectations_resolved_total", map[string]string{"resolution": "expired"}), "expired rounds")
		assert.Positive(t, r.expiredLines, "expired expectations logged at the default level")
	})
}

// gateResult is what one run of the lag scenario measured.
type gateResult struct {
	created      int     // pods ever controlled by the ReplicaSet
	deferred     int     // syncs that ended with the gate's error
	metrics      scraped // the controller's metrics, once they agree with the above
	expiredLines int     // the controller's log lines about expired expectations
}

func runGateScenario(t *testing.T, cp *controlplane.ControlPlane, gate bool) gateResult {
	proxy, kubeconfig, err := cp.FaultProxy(controlplane.AdminUser)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	e := newRSEnv(t, cp, "-kubeconfig", kubeconfig, "-exact=false",
		"-expectations-ttl", gateTTL.String(), fmt.Sprintf("-consistency-gate=%t", gate))
	waitFor(t, e.ctx, convergeTimeout, "the controller's caches synced through the proxy", func(context.Context) (bool, string, error) {
		return e.ctrl.count("rscontroller: caches synced") > 0, fmt.Sprintf("proxy %+v", proxy.Stats()), nil
	})
	require.Positive(t, proxy.Stats().PodWatches, "the controller's pod watch does not go through the proxy")
	proxy.SetPodWatchDelay(gateDelay)

	const owner = "ReplicaSet/web"
	rs := newReplicaSet("web", gatePods, 0)
	if gate {
		e.create(rs) // at most gatePods live pods, ever
	} else {
		e.pods.allow(owner, 2*gatePods)
		_, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, rs, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	waitFor(t, e.ctx, convergeTimeout, "the first pod", func(context.Context) (bool, string, error) {
		return len(e.pods.everOwnedBy(owner)) > 0, "none yet", nil
	})
	first := time.Now()
	since := func() string { return time.Since(first).Round(100 * time.Millisecond).String() }
	waitFor(t, e.ctx, convergeTimeout, fmt.Sprintf("%d pods created", gatePods), func(context.Context) (bool, string, error) {
		n := len(e.pods.everOwnedBy(owner))
		return n >= gatePods, fmt.Sprintf("%d created", n), nil
	})
	t.Logf("%s: %d pods created (the controller sees none of them for %v)", since(), gatePods, gateDelay)

	// Touch the ReplicaSet once the TTL has passed. Waiting for a moment,
	// not for a condition: the scenario is about what the controller does
	// when the TTL has expired and its pod cache is still behind.
	touchAt := first.Add(gateTouchAfter)
	select {
	case <-time.After(time.Until(touchAt)):
	case <-e.ctx.Done():
		t.Fatal(e.ctx.Err())
	}
	_, err = e.client.AppsV1().ReplicaSets(e.ns).Patch(e.ctx, "web", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"e2e.reconcilekit.dev/touch":"1"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	touched := time.Now()
	require.Less(t, touched.Sub(first), gateDelay-5*time.Second,
		"the touch came too late for the scenario (a very slow machine?): the delayed pod events may have arrived")
	t.Logf("%s: touched the ReplicaSet", since())

	if !gate {
		// The over-creation follows the touch at once; wait for it, at most
		// until the delayed events start arriving.
		waitFor(t, e.ctx, gateDelay, "pods created after the touch", func(context.Context) (bool, string, error) {
			n := len(e.pods.everOwnedBy(owner))
			return n > gatePods || time.Since(first) > gateDelay, fmt.Sprintf("%d created", n), nil
		})
		t.Logf("%s: %d pods ever created; releasing the delayed pod events", since(), len(e.pods.everOwnedBy(owner)))
		proxy.SetPodWatchDelay(0)
	}
	e.converge("web", want{replicas: gatePods, ready: gatePods, available: gatePods, terminating: ptr.To[int32](0)})
	r := gateResult{created: len(e.pods.everOwnedBy(owner))}
	// The metrics and the per-sync lines must tell the same story: every
	// deferred sync printed, counted under its result and in upstream's
	// skip counter; every pod the watch saw counted as created. A sync may
	// still be running when the ReplicaSet converges: wait until they agree.
	metricsURL := e.ctrl.endpoint(t, e.ctx, "metrics")
	waitFor(t, e.ctx, convergeTimeout, "the metrics agree with the sync lines and the pod watch", func(ctx context.Context) (bool, string, error) {
		r.metrics = scrape(t, ctx, metricsURL)
		r.deferred = e.ctrl.countSyncs("sync deferred")
		skips := r.metrics.sum("replicaset_controller_stale_sync_skips_total", nil)
		deferred := r.metrics.sum("reconcilekit_syncs_total", map[string]string{"result": "deferred"})
		created := r.metrics.podsCreated()
		seen := fmt.Sprintf("sync lines deferred %d; metrics: skips %.0f, deferred syncs %.0f, created %.0f (watch %d)", r.deferred, skips, deferred, created, r.created)
		return skips == float64(r.deferred) && deferred == float64(r.deferred) && created == float64(r.created), seen, nil
	})
	r.expiredLines = e.ctrl.count("Expectations expired")
	t.Logf("metrics: %s", r.metrics.summary())
	t.Logf("%s: converged; gate %t: pods ever created %d (desired %d), syncs deferred %d, most live pods %d; proxy %+v",
		since(), gate, r.created, gatePods, r.deferred, e.pods.maxLive(owner), proxy.Stats())
	assert.False(t, e.ctrl.exited(), "the controller exited")
	return r
}
