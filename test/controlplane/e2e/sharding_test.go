package e2e_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// haUserC is the third replica's user in TestReplicaSetSharded.
const haUserC = "e2e-ha-c"

// shardLeaseFlags are the shards' Lease timings in TestReplicaSetSharded,
// as haElectionFlags without -leader-elect (lease 4 s, renew 3 s, retry 1 s).
var shardLeaseFlags = haElectionFlags[1:]

// shardedEnv is the namespace of TestReplicaSetSharded and the prefix of
// its shards' Leases (in kube-system).
type shardedEnv struct {
	*haEnv
	shards int
}

// replica starts one sharded replica as user with identity id.
func (e *shardedEnv) replica(user, id string, extra ...string) *proc {
	e.t.Helper()
	kubeconfig, err := e.cp.Kubeconfig(user)
	require.NoError(e.t, err)
	args := append([]string{"-kubeconfig", kubeconfig, "-namespace", e.ns, fmt.Sprintf("-shards=%d", e.shards),
		"-leader-elect-resource-namespace=kube-system", "-leader-elect-resource-name=" + e.lease,
		"-leader-elect-identity=" + id}, shardLeaseFlags...)
	return startProc(e.t, id, e.bin, append(args, extra...)...)
}

// holders returns the holder of each shard's Lease ("" for none, or a
// missing Lease).
func (e *shardedEnv) holders(ctx context.Context) ([]string, error) {
	out := make([]string, e.shards)
	for i := range out {
		l, err := e.client.CoordinationV1().Leases("kube-system").Get(ctx, fmt.Sprintf("%s-shard-%d-of-%d", e.lease, i, e.shards), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i] = ptrString(l.Spec.HolderIdentity)
	}
	return out, nil
}

// waitHeld waits until the shards are held by exactly the replicas ids,
// each holding at most ceil(shards/len(ids)).
func (e *shardedEnv) waitHeld(ids ...string) {
	e.t.Helper()
	share := (e.shards + len(ids) - 1) / len(ids)
	waitFor(e.t, e.ctx, time.Minute, fmt.Sprintf("the %d shards spread over %v", e.shards, ids), func(ctx context.Context) (bool, string, error) {
		hs, err := e.holders(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		count := map[string]int{}
		for _, h := range hs {
			count[h]++
		}
		ok := len(count) == len(ids)
		for _, id := range ids {
			ok = ok && count[id] >= 1 && count[id] <= share
		}
		return ok, fmt.Sprint(hs), nil
	})
}

// TestReplicaSetSharded runs the examples' client-go controller as sharded
// replicas (-shards 4, short Leases) over several ReplicaSets of one
// namespace, with kube-apiserver selecting each shard's ReplicaSets
// (ShardedListAndWatch): pods made before sharding are stamped, not
// replaced; a replica joins and another gets SIGTERM in the middle of a
// scale-up (graceful hand-overs); a replica is paused past its Leases and
// resumed (it writes nothing after). No ReplicaSet ever has more live pods
// than desired, and every pod created is one the ReplicaSet asked for.
func TestReplicaSetSharded(t *testing.T) {
	t.Parallel()
	cp := sharedControlPlane(t)
	rs, _ := buildControllers(t)
	e := &shardedEnv{haEnv: &haEnv{rsEnv: newHAEnv(t, cp), bin: rs}, shards: 4}
	e.lease = "e2e-shards-" + e.ns
	names := []string{"s0", "s1", "s2", "s3", "s4", "s5"}

	// Before sharding: one unsharded replica makes "pre"'s pods, without
	// the bucket label, and stops.
	u := startProc(t, "unsharded", e.bin, "-kubeconfig", mustKubeconfig(t, e), "-namespace", e.ns)
	e.create(newReplicaSet("pre", 6, 0))
	e.converge("pre", want{replicas: 6, ready: 6, available: 6, terminating: ptrInt32(0)})
	require.NoError(t, u.cmd.Process.Signal(syscall.SIGTERM))
	waitFor(t, e.ctx, time.Minute, "the unsharded replica exiting", func(context.Context) (bool, string, error) {
		return u.exited(), "", nil
	})

	// Phase 1: two replicas, the first slow; six ReplicaSets 0 → 15. A
	// third replica joins during the scale-up (the others give it shards)
	// and the slow one gets SIGTERM (it gives its shards back).
	a := e.replica(haUserA, "a", "-qps=5", "-burst=1")
	b := e.replica(haUserB, "b")
	e.waitHeld("a", "b")
	for _, n := range names {
		e.create(newReplicaSet(n, 15, 0))
	}
	e.waitAtLeast("ReplicaSet/s0", 1)
	c := e.replica(haUserC, "c")
	e.waitHeld("a", "b", "c")
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	termed := time.Now()
	e.waitHeld("b", "c")
	t.Logf("phase 1: a's shards held by b and c %v after its SIGTERM", time.Since(termed).Round(100*time.Millisecond))
	waitFor(t, e.ctx, time.Minute, "a exiting on SIGTERM", func(context.Context) (bool, string, error) {
		return a.exited(), "", nil
	})
	// The goal: ≤ 1 s from a release to the next holder's first
	// sync (its workers start once its caches hold the shard). Logged, not
	// asserted: a time on a shared machine is a measurement.
	for shard, d := range handOvers(t, a, b, c) {
		t.Logf("phase 1: shard %s: %v from a's release to the next holder's workers", shard, d.Round(time.Millisecond))
	}
	for _, n := range names {
		e.converge(n, want{replicas: 15, ready: 15, available: 15, terminating: ptrInt32(0)})
	}
	e.converge("pre", want{replicas: 6, ready: 6, available: 6, terminating: ptrInt32(0)})
	waitFor(t, e.ctx, time.Minute, "pre's pods stamped with their bucket", func(ctx context.Context) (bool, string, error) {
		pods, err := e.client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=pre,sharding.reconcilekit.io/bucket"})
		if err != nil {
			return false, err.Error(), nil
		}
		return len(pods.Items) == 6, fmt.Sprintf("%d stamped", len(pods.Items)), nil
	})

	// Phase 2: pause b (SIGSTOP) during 15 → 30, resume it once c holds
	// every shard and the ReplicaSets converged: b writes nothing after.
	for _, n := range names {
		e.scale(n, 30)
	}
	e.waitAtLeast("ReplicaSet/s0", 16)
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = b.cmd.Process.Signal(syscall.SIGCONT) })
	paused := time.Now()
	e.waitHeld("c")
	t.Logf("phase 2: c holds every shard %v after b was paused", time.Since(paused).Round(100*time.Millisecond))
	for _, n := range names {
		e.converge(n, want{replicas: 30, ready: 30, available: 30, terminating: ptrInt32(0)})
	}
	resumed := time.Now()
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGCONT))
	e.waitHeld("b", "c") // b rejoins and takes its share again
	for _, n := range names {
		e.converge(n, want{replicas: 30, ready: 30, available: 30, terminating: ptrInt32(0)})
	}
	time.Sleep(time.Second) // kube-apiserver logs a request after answering it
	t.Logf("phase 2: b paused for %v", resumed.Sub(paused).Round(100*time.Millisecond))
	assert.Zero(t, e.writesBefore(haUserB, resumed, e.rejoined(resumed)), "b's writes after SIGCONT, before it took a shard again")
	for _, n := range names {
		assert.Len(t, e.pods.everOwnedBy("ReplicaSet/"+n), 30, "pods created for %s: none above desired, none replaced", n)
	}
	assert.Len(t, e.pods.everOwnedBy("ReplicaSet/pre"), 6, "pre's pods: stamped, none replaced")
	_ = c
}

func mustKubeconfig(t *testing.T, e *shardedEnv) string {
	t.Helper()
	k, err := e.cp.Kubeconfig(haUserA)
	require.NoError(t, err)
	return k
}

// rejoined returns when haUserB's first successful write of a shard's
// Lease at or after from reached kube-apiserver: the paused replica taking
// a shard again (a far future when it did not).
func (e *shardedEnv) rejoined(from time.Time) time.Time {
	e.t.Helper()
	evs, err := e.cp.AuditEvents()
	require.NoError(e.t, err)
	for _, ev := range evs {
		if ev.User == haUserB && ev.Resource == "leases" && ev.Namespace == "kube-system" && (ev.Verb == "update" || ev.Verb == "create") &&
			ev.Code < 300 && strings.HasPrefix(ev.Name, e.lease+"-shard-") && !ev.Received.Before(from) {
			return ev.Received
		}
	}
	return from.Add(24 * time.Hour)
}

// writesBefore counts user's writes in e's namespace that arrived at
// kube-apiserver in [from, to).
func (e *shardedEnv) writesBefore(user string, from, to time.Time) int {
	e.t.Helper()
	evs, err := e.cp.AuditEvents()
	require.NoError(e.t, err)
	n := 0
	for _, ev := range evs {
		if ev.User == user && ev.Namespace == e.ns && ev.Write() && !ev.Received.Before(from) && ev.Received.Before(to) {
			n++
		}
	}
	return n
}

// handOvers returns, for each shard from gave back, the time from its
// "Gave a shard back" log line to the "starting the workers" line of the
// replica among takers that took it next: the graceful hand-over, as the
// replicas' klog timestamps (one machine's clock) measure it.
func handOvers(t *testing.T, from *proc, takers ...*proc) map[string]time.Duration {
	t.Helper()
	gave := logTimes(from, `"Gave a shard back"`)
	out := map[string]time.Duration{}
	for shard, given := range gave {
		for _, p := range takers {
			for _, started := range logTimesAll(p, `"Informer caches synced; starting the workers"`)[shard] {
				if started.After(given) {
					if d, ok := out[shard]; !ok || started.Sub(given) < d {
						out[shard] = started.Sub(given)
					}
					break
				}
			}
		}
	}
	return out
}

// logTimes returns the time of the last line of p's output containing
// msg, by the shard="…" it names.
func logTimes(p *proc, msg string) map[string]time.Time {
	out := map[string]time.Time{}
	for shard, ts := range logTimesAll(p, msg) {
		out[shard] = ts[len(ts)-1]
	}
	return out
}

// logTimesAll returns the times of p's klog lines containing msg, by the
// shard="…" they name, in order. klog's header has the time of day only:
// the lines are taken to be of today.
func logTimesAll(p *proc, msg string) map[string][]time.Time {
	b, _ := os.ReadFile(p.out.Name())
	out := map[string][]time.Time{}
	today := time.Now().Format("2006-01-02 ")
	for line := range strings.SplitSeq(string(b), "\n") {
		if !strings.Contains(line, msg) || len(line) < 22 {
			continue
		}
		_, rest, ok := strings.Cut(line, `shard="`)
		if !ok {
			continue
		}
		shard, _, _ := strings.Cut(rest, `"`)
		ts, err := time.ParseInLocation("2006-01-02 15:04:05.000000", today+line[6:21], time.Local)
		if err != nil {
			continue
		}
		out[shard] = append(out[shard], ts)
	}
	return out
}
