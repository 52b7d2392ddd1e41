package e2e_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// The users of the two replicas of TestReplicaSetLeaderElection (and of
// TestPodSetLeaderElection), each its own so that the audit log tells their
// writes apart.
const (
	haUserA = "e2e-ha-a"
	haUserB = "e2e-ha-b"
)

var haUsers = []controlplane.User{{Name: haUserA}, {Name: haUserB}, {Name: haUserC}} // Groups nil: system:masters

// Short leases keep the test small: lease 4 s, renew 3 s, retry 1 s.
var haElectionFlags = []string{
	"-leader-elect=true",
	"-leader-elect-lease-duration=4s",
	"-leader-elect-renew-deadline=3s",
	"-leader-elect-retry-period=1s",
}

// haEnv is the namespace of a leader-election test, its Lease and the
// controller binary its replicas run.
type haEnv struct {
	*rsEnv
	lease string // in kube-system
	bin   string // an example controller with -namespace and the election flags
}

// replica starts one replica of e.bin on e's namespace as user, with
// identity id; extra flags last.
func (e *haEnv) replica(user, id string, extra ...string) *proc {
	e.t.Helper()
	kubeconfig, err := e.cp.Kubeconfig(user)
	require.NoError(e.t, err)
	args := append([]string{"-kubeconfig", kubeconfig, "-namespace", e.ns,
		"-leader-elect-resource-namespace=kube-system", "-leader-elect-resource-name=" + e.lease,
		"-leader-elect-identity=" + id}, haElectionFlags...)
	return startProc(e.t, id, e.bin, append(args, extra...)...)
}

func (e *haEnv) holder(ctx context.Context) (string, string, error) {
	l, err := e.client.CoordinationV1().Leases("kube-system").Get(ctx, e.lease, metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	return ptrString(l.Spec.HolderIdentity), l.ResourceVersion, nil
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// waitLeads waits until id holds the lease.
func (e *haEnv) waitLeads(id string) {
	e.t.Helper()
	waitFor(e.t, e.ctx, time.Minute, id+" holding the lease "+e.lease, func(ctx context.Context) (bool, string, error) {
		h, _, err := e.holder(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		return h == id, "holder " + h, nil
	})
}

// waitAtLeast waits until at least n pods of owner ("Kind/name") are live.
func (e *haEnv) waitAtLeast(owner string, n int) {
	e.t.Helper()
	waitFor(e.t, e.ctx, time.Minute, fmt.Sprintf("%d live pods of %s", n, owner), func(context.Context) (bool, string, error) {
		live := len(e.pods.live(owner))
		return live >= n, fmt.Sprintf("%d live", live), nil
	})
}

// writesAfter counts user's writes (pods, their owners, events) in e's
// namespace that arrived at kube-apiserver at or after from.
func (e *haEnv) writesAfter(user string, from time.Time) int {
	e.t.Helper()
	evs, err := e.cp.AuditEvents()
	require.NoError(e.t, err)
	n := 0
	for _, ev := range evs {
		if ev.User == user && ev.Namespace == e.ns && ev.Write() && !ev.Received.Before(from) {
			n++
		}
	}
	return n
}

// TestReplicaSetLeaderElection runs the examples' client-go controller as
// two replicas behind a Lease (short leases) on one ReplicaSet, in three
// phases: the leader is killed in the middle of a scale-up (the other
// takes over and converges with no pod above desired); the new leader gets
// SIGTERM (it releases the lease, so the other leads without waiting for
// it to expire); the leader is paused (SIGSTOP) in the middle of a
// scale-up and resumed (SIGCONT) once the other replica leads and the
// ReplicaSet converged: the resumed replica writes nothing, since its
// lease has passed to the other.
func TestReplicaSetLeaderElection(t *testing.T) {
	t.Parallel()
	cp := sharedControlPlane(t)
	rs, _ := buildControllers(t)
	e := &haEnv{rsEnv: newHAEnv(t, cp), bin: rs}
	e.lease = "e2e-ha-" + e.ns
	const name = "ha"
	// The first leader creates pods slowly (5 a second), so that the
	// scale-up is still under way when it is stopped.
	slow := []string{"-qps=5", "-burst=1"}

	// Phase 1: SIGKILL the leader during 0 → 30.
	a1 := e.replica(haUserA, "a1", slow...)
	e.waitLeads("a1")
	b1 := e.replica(haUserB, "b1")
	e.waitWaiting(b1)
	e.create(newReplicaSet(name, 30, 0)) // the pod watch fails the test on more than 30 live pods
	e.waitAtLeast("ReplicaSet/"+name, 3)
	a1.kill()
	killed := time.Now()
	e.waitLeads("b1")
	e.converge(name, want{replicas: 30, ready: 30, available: 30, terminating: ptrInt32(0)})
	assert.Len(t, e.pods.everOwnedBy("ReplicaSet/"+name), 30, "pods created: none above desired")
	t.Logf("phase 1: b1 converged %v after a1 was killed", time.Since(killed).Round(100*time.Millisecond))

	// Phase 2: SIGTERM to the leader: it releases the lease and the other
	// replica takes it on its next try, not a lease duration later.
	a2 := e.replica(haUserA, "a2", slow...)
	e.waitWaiting(a2)
	e.handOver(b1, "a2")

	// Phase 3: SIGSTOP the leader (a2, slow) during 30 → 60, SIGCONT once
	// the other replica leads and the ReplicaSet converged: the resumed
	// replica makes no write.
	b2 := e.replica(haUserB, "b2")
	e.waitWaiting(b2)
	e.scale(name, 60)
	e.waitAtLeast("ReplicaSet/"+name, 33)
	require.NoError(t, a2.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = a2.cmd.Process.Signal(syscall.SIGCONT) }) // runs before startProc's stop
	paused := time.Now()
	e.waitLeads("b2")
	e.converge(name, want{replicas: 60, ready: 60, available: 60, terminating: ptrInt32(0)})
	resumed := time.Now()
	require.NoError(t, a2.cmd.Process.Signal(syscall.SIGCONT))
	waitFor(t, e.ctx, time.Minute, "a2 exiting on its lost lease", func(context.Context) (bool, string, error) {
		return a2.exited(), "", nil
	})
	e.converge(name, want{replicas: 60, ready: 60, available: 60, terminating: ptrInt32(0)})
	time.Sleep(time.Second) // kube-apiserver logs a request after answering it
	t.Logf("phase 3: a2 paused for %v", resumed.Sub(paused).Round(100*time.Millisecond))
	assert.Zero(t, e.writesAfter(haUserA, resumed), "a2's writes after SIGCONT")
	assert.Len(t, e.pods.everOwnedBy("ReplicaSet/"+name), 60, "pods created in all: none above desired, none replaced")
}

// handOver sends SIGTERM to leader and waits until next holds the lease;
// it checks that leader released the lease (an empty holder, before next's)
// and exited.
func (e *haEnv) handOver(leader *proc, next string) {
	e.t.Helper()
	_, rv, err := e.holder(e.ctx)
	require.NoError(e.t, err)
	w, err := e.client.CoordinationV1().Leases("kube-system").Watch(e.ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + e.lease, ResourceVersion: rv})
	require.NoError(e.t, err)
	defer w.Stop()
	require.NoError(e.t, leader.cmd.Process.Signal(syscall.SIGTERM))
	termed := time.Now()
	var holders []string
	timeout := time.After(time.Minute)
	for len(holders) == 0 || holders[len(holders)-1] != next {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(e.t, ok, "the Lease watch ended; holders seen: %q", holders)
			if ev.Type == watch.Modified {
				holders = append(holders, ptrString(ev.Object.(*coordinationv1.Lease).Spec.HolderIdentity))
			}
		case <-timeout:
			require.FailNow(e.t, next+" did not take the lease", "holders seen: %q", holders)
		}
	}
	assert.Contains(e.t, holders, "", "%s released the lease on SIGTERM (holders seen: %q)", leader.name, holders)
	e.t.Logf("%s held the lease %v after %s's SIGTERM", next, time.Since(termed).Round(100*time.Millisecond), leader.name)
	waitFor(e.t, e.ctx, time.Minute, leader.name+" exiting on SIGTERM", func(context.Context) (bool, string, error) {
		return leader.exited(), "", nil
	})
}

// waitWaiting waits until p, a replica, has started its election.
func (e *haEnv) waitWaiting(p *proc) {
	e.t.Helper()
	waitFor(e.t, e.ctx, time.Minute, p.name+" waiting for the lease", func(context.Context) (bool, string, error) {
		return p.count("leader election: waiting for the lease") > 0, "", nil
	})
}

// newHAEnv is a namespace with its pods and ReplicaSet statuses watched,
// and no controller yet.
func newHAEnv(t *testing.T, cp *controlplane.ControlPlane) *rsEnv {
	t.Helper()
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	e := &rsEnv{t: t, ctx: ctx, cp: cp, client: client, statuses: map[string][]appsv1.ReplicaSetStatus{}}
	e.ns = newNamespace(t, ctx, client)
	e.pods = watchPods(t, ctx, client, e.ns)
	e.watchStatuses()
	return e
}

func ptrInt32(v int32) *int32 { return &v }
