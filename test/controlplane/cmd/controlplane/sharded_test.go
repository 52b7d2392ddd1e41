package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

func TestShardingValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     sharding
		fault string
		err   string // a part of the error; "" for none
	}{
		{"today's run", sharding{replicas: 1}, "none", ""},
		{"today's faults", sharding{replicas: 1}, "leader-kill", ""},
		{"one sharded replica", sharding{replicas: 1, shards: 16}, "none", ""},
		{"sharded replicas", sharding{replicas: 4, shards: 16}, "none", ""},
		{"a replica fault", sharding{replicas: 2, shards: 4}, "replica-pause", ""},
		{"no replicas", sharding{replicas: 0}, "none", "-replicas ≥ 1"},
		{"too many shards", sharding{replicas: 2, shards: 257}, "none", "-shards ≤ 256"},
		{"replicas without shards", sharding{replicas: 2}, "none", "needs -shards > 0"},
		{"a replica fault unsharded", sharding{replicas: 1}, "replica-kill", "needs -shards > 0"},
		{"a replica fault with one replica", sharding{replicas: 1, shards: 4}, "replica-add", "needs -replicas ≥ 2"},
		{"a leader fault sharded", sharding{replicas: 2, shards: 4}, "leader-pause", "not with -shards"},
		{"a proxy fault sharded", sharding{replicas: 2, shards: 4}, "failing-writes", "only none, replica-add"},
		{"a re-shard", sharding{replicas: 2, shards: 4, reshard: 8}, "replica-reshard", ""},
		{"a re-shard to fewer", sharding{replicas: 4, shards: 16, reshard: 1}, "replica-reshard", ""},
		{"a re-shard without -reshard", sharding{replicas: 2, shards: 4}, "replica-reshard", "needs -reshard K2"},
		{"a re-shard to the same K", sharding{replicas: 2, shards: 4, reshard: 4}, "replica-reshard", "other than -shards 4"},
		{"a re-shard to too many", sharding{replicas: 2, shards: 4, reshard: 257}, "replica-reshard", "K2 ≤ 256"},
		{"a re-shard to a negative K", sharding{replicas: 2, shards: 4, reshard: -1}, "replica-reshard", "1 ≤ K2"},
		{"a re-shard unsharded", sharding{replicas: 2, reshard: 8}, "replica-reshard", "needs -shards > 0"},
		{"a re-shard with one replica", sharding{replicas: 1, shards: 4, reshard: 8}, "replica-reshard", "needs -replicas ≥ 2"},
		{"-reshard with another fault", sharding{replicas: 2, shards: 4, reshard: 8}, "replica-rolling", "not with -fault replica-rolling"},
		{"-reshard with no fault", sharding{replicas: 2, shards: 4, reshard: 8}, "none", "not with -fault none"},
		{"-reshard unsharded", sharding{replicas: 1, reshard: 8}, "none", "not with -fault none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.validate(tc.fault)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestShardingFeatureGates(t *testing.T) {
	assert.Nil(t, sharding{replicas: 1}.featureGates(nil), "unsharded and not asked: the gates as they were")
	assert.Equal(t, map[string]bool{shardedGate: true}, sharding{replicas: 2, shards: 4, serverSide: true}.featureGates(nil))
	in := map[string]bool{"Other": true}
	out := sharding{replicas: 2, shards: 4}.featureGates(in)
	assert.Equal(t, map[string]bool{"Other": true, shardedGate: false}, out, "-sharded-list-and-watch=false turns the gate off")
	assert.Equal(t, map[string]bool{"Other": true}, in, "the caller's map is not changed")
	assert.Equal(t, map[string]bool{shardedGate: false}, sharding{replicas: 1, serverSideSet: true}.featureGates(nil), "given without -shards: still applied")
}

func TestShardedRow(t *testing.T) {
	s := sharding{replicas: 2, shards: 4}
	for i, want := range map[int]bool{0: false, 1: false, 2: true, 3: true, 4: false, 7: false, 8: true} {
		assert.Equal(t, want, s.shardedRow(contenders[i]), "contender %d (%s)", i, contenders[i].key)
	}
	assert.False(t, sharding{replicas: 1}.shardedRow(contenders[2]), "unsharded: no row is")
}

func TestShardLease(t *testing.T) {
	for _, tc := range []struct {
		ns, name string
		want     bool
	}{
		{"kube-system", "p-shard-0-of-4", true},
		{"kube-system", "p-shard-15-of-16", true},
		{"default", "p-shard-0-of-4", false},
		{"kube-system", "p-replica-00ff00ff00ff00ff", false},
		{"kube-system", "q-shard-0-of-4", false},
		{"kube-system", "p-shard-x-of-4", false},
		{"kube-system", "p-shard-0", false},
	} {
		assert.Equal(t, tc.want, shardLease(tc.ns, tc.name, "p"), "%s/%s", tc.ns, tc.name)
	}
}

func TestShardsHeldAndSettled(t *testing.T) {
	lease := func(name, holder string) coordinationv1.Lease {
		l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}}
		if holder != "" {
			l.Spec.HolderIdentity = ptr.To(holder)
		}
		return l
	}
	leases := []coordinationv1.Lease{
		lease("p-shard-0-of-4", "a"), lease("p-shard-1-of-4", "a"), lease("p-shard-2-of-4", "b"),
		lease("p-shard-3-of-4", ""), lease("p-replica-1", "a"), lease("other", "c"),
	}
	held := shardsHeld(leases, "p", 4)
	assert.Equal(t, map[string]int{"a": 2, "b": 1}, held, "shard Leases only, a free one not counted")
	assert.False(t, settled(held, []string{"a", "b"}, 4), "a shard is free")
	leases[3] = lease("p-shard-3-of-4", "b")
	held = shardsHeld(leases, "p", 4)
	assert.True(t, settled(held, []string{"a", "b"}, 4))
	assert.False(t, settled(held, []string{"a", "b", "c"}, 4), "c holds none though there are enough shards")
	assert.False(t, settled(held, []string{"a"}, 4), "b, not asked for, holds some")
	assert.True(t, settled(map[string]int{"a": 1}, []string{"a", "b"}, 1), "one shard for two replicas: one of them idle")
}

// TestSettledTwoKs: during -fault replica-reshard the Leases of K = 4 (the
// old replicas') and of K2 = 8 (the replacements') live side by side; each
// count is settled over its own replicas, and the Leases of the other K
// count for neither.
func TestSettledTwoKs(t *testing.T) {
	var leases []coordinationv1.Lease
	add := func(k int, holders ...string) {
		for i, h := range holders {
			l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: fmt.Sprintf("p-shard-%d-of-%d", i, k)}}
			l.Spec.HolderIdentity = ptr.To(h)
			leases = append(leases, l)
		}
	}
	replica := func(id string) {
		l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "p-replica-" + id}}
		l.Spec.HolderIdentity = ptr.To(id)
		leases = append(leases, l)
	}
	// Two old replicas (a, b; K = 4) and c, b's replacement (K2 = 8),
	// which holds nothing yet: a, the old replica left, holds half the
	// old shards, the other half given back by b when it exited.
	add(4, "a", "a", "", "")
	add(8, "", "", "", "", "", "", "", "")
	replica("a")
	replica("c")
	old, next := shardsHeld(leases, "p", 4), shardsHeld(leases, "p", 8)
	assert.Equal(t, map[string]int{"a": 2}, old)
	assert.Empty(t, next, "no K2 shard is held")
	assert.Equal(t, 2, heldBy(old, []string{"a"}))
	assert.False(t, settled(old, []string{"a"}, 4), "two old shards are free")
	assert.True(t, registered(leases, "p", "c"), "the replacement counts among the replicas")
	assert.False(t, registered(leases, "p", "b"), "the replica gone left the group")
	assert.False(t, registered(leases, "q", "c"), "another group")

	// a takes them back: the old K is settled over the old replicas.
	leases[2].Spec.HolderIdentity, leases[3].Spec.HolderIdentity = ptr.To("a"), ptr.To("a")
	old = shardsHeld(leases, "p", 4)
	assert.True(t, settled(old, []string{"a"}, 4))
	assert.False(t, settled(old, []string{"a", "c"}, 4), "c holds no old shard")
	assert.False(t, settled(shardsHeld(leases, "p", 8), []string{"c"}, 8))

	// a exited and gave its shards back; c and d, the replacements,
	// hold every K2 shard while the old Leases stay, free.
	leases = leases[:0]
	add(4, "", "", "", "")
	add(8, "c", "d", "c", "d", "c", "d", "c", "d")
	next = shardsHeld(leases, "p", 8)
	assert.Equal(t, map[string]int{"c": 4, "d": 4}, next)
	assert.True(t, settled(next, []string{"c", "d"}, 8))
	assert.Empty(t, shardsHeld(leases, "p", 4))
	assert.False(t, settled(shardsHeld(leases, "p", 4), []string{"c", "d"}, 4), "the old K is held by no one")

	// A replica of K2 that took old-K Leases would not settle K2.
	leases[0].Spec.HolderIdentity = ptr.To("c")
	assert.True(t, settled(shardsHeld(leases, "p", 8), []string{"c", "d"}, 8), "an old Lease does not count for K2")
	assert.Equal(t, map[string]int{"c": 1}, shardsHeld(leases, "p", 4))
}

func TestPausedReplicaWrites(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ev := func(s int, user, verb, resource, ns, name string, code int) controlplane.AuditEvent {
		return controlplane.AuditEvent{User: user, Verb: verb, Resource: resource, Namespace: ns, Name: name, Code: code, Received: at(s)}
	}
	evs := []controlplane.AuditEvent{
		ev(1, "r1", "create", "pods", "compare", "x", 201),                     // before the resume
		ev(10, "r1", "create", "pods", "compare", "y", 201),                    // after: counted, accepted
		ev(11, "r1", "update", "replicasets", "compare", "rs", 409),            // refused, counted
		ev(12, "r1", "update", "leases", "kube-system", "p-shard-1-of-4", 409), // a lost renewal: not a take
		ev(12, "r0", "create", "pods", "compare", "z", 201),                    // another replica
		ev(20, "r1", "update", "leases", "kube-system", "p-shard-1-of-4", 200), // the take
		ev(21, "r1", "create", "pods", "compare", "w", 201),                    // after the take
	}
	took, ok := rejoined(evs, "p", "r1", at(10))
	require.True(t, ok)
	assert.Equal(t, at(20), took)
	w, c := writesBetween(evs, "r1", at(10), took)
	assert.Equal(t, 2, w, "the create and the refused ReplicaSet update")
	assert.Equal(t, 1, c)
	w, _ = writesBetween(evs, "r1", at(10), time.Time{})
	assert.Equal(t, 3, w, "no end: to the log's end")
	_, ok = rejoined(evs, "p", "r0", at(0))
	assert.False(t, ok)

	var res shardResult
	g := &shardGroup{prefix: "p", slots: []*slot{{user: "r0"}, {user: "r1"}}}
	g.pausedAccount(evs, at(10), &res)
	assert.Equal(t, shardResult{pausedWrites: 2, pausedCreates: 1, rejoin: 10 * time.Second}, res, "the last slot is the paused one")
}

func TestFilteringOf(t *testing.T) {
	out := "rscontroller: something\nrscontroller: running sharded, 4 shards, ReplicaSets filtered server-side (metadata.shardInfo echoed)\nmore\n"
	f, ok := filteringOf(out)
	require.True(t, ok)
	assert.Equal(t, "server-side (metadata.shardInfo echoed)", f)
	_, ok = filteringOf("rscontroller: not sharded\n")
	assert.False(t, ok)

	assert.Equal(t, "—", filteringSummary(nil))
	assert.Equal(t, "client-side ×1, server-side ×2 (a) (b)",
		filteringSummary([]string{"server-side (a)", "client-side (b)", "server-side (a)"}))
	assert.Equal(t, "? ×1", filteringSummary([]string{"?"}))
}

func TestPrintSharded(t *testing.T) {
	c := compareConfig{fault: "replica-pause", faultAfter: 3 * time.Second, resumeAfter: 25 * time.Second,
		sharding: sharding{replicas: 2, shards: 4, serverSide: true}}
	chosen := []contender{contenders[0], contenders[2]}
	run := runResult{
		phases: []measured{{cpu: time.Second, apiCPU: 2 * time.Second, creates: 10, statusWrites: 3}, {cpu: time.Second, deletes: 5}},
		extra:  1,
		shard: shardResult{replicaRSS: []int64{100 << 10, 50 << 10}, filtering: []string{"server-side (x)", "server-side (x)"},
			owner: []faultproxy.Stats{
				{ReplicaSetWatchBytes: 3 << 20, ReplicaSetListBytes: 1 << 20, ReplicaSetWatchesWithInitialEvents: 2, ReplicaSetInitialEvents: 60, ReplicaSetInitialEventsBytes: 1 << 20, ReplicaSetWatchEvents: 300, ReplicaSetWatchesCompressed: 2},
				{ReplicaSetWatchBytes: 1 << 20, ReplicaSetListBytes: 1 << 19, ReplicaSetWatchesWithInitialEvents: 1, ReplicaSetInitialEvents: 1, ReplicaSetWatchEvents: 100, ReplicaSetWatchesCompressed: 1},
			},
			full:    faultproxy.Stats{ReplicaSetWatchBytes: 4 << 20, ReplicaSetWatchesWithInitialEvents: 1, ReplicaSetInitialEvents: 30, ReplicaSetInitialEventsBytes: 1 << 19, ReplicaSetWatchEvents: 800, ReplicaSetWatchesCompressed: 1},
			retaken: 17 * time.Second, resynced: resyncs{shards: 4, synced: 3, longest: 16500 * time.Millisecond, longestStart: 16 * time.Second},
			paused: 25 * time.Second, pausedWrites: 4, pausedCreates: 2, rejoin: 3 * time.Second},
	}
	var b bytes.Buffer
	printSharded(&b, c, chosen, [][]runResult{{{}}, {run}})
	got := b.String()
	assert.Contains(t, got, "Sharded: 2 replicas × 4 shards, kube-apiserver feature gate ShardedListAndWatch on")
	// Per replica, mean: 2 MiB of the full stream's 4 MiB; events after
	// the lists: (300 + 100) / 2 = 200 of its 800.
	assert.Contains(t, got, "| reconcilekit, defaults | server-side ×2 (x) | 100 MiB | 75 MiB | 3072 KiB | 2048 KiB | 4096 KiB | 1536 KiB | 4096 KiB | 0.50, 0.25 | 3, 61 objects, 1024 KiB, 3 gzip (1, 30 objects, 512 KiB, 1 gzip) | 2.00 s | 2.00 s | 18 | 1 | 17.0 s | 4, 3, 16.5 s (started 16.0 s) | 25.0 s | 4 (2) | 3.0 s |\n")
	assert.Contains(t, got, "| owner watch bytes per replica, max | owner watch bytes per replica, mean | owner watch bytes, all replicas | owner list bytes, all replicas | the full owner stream | owner watch per replica, mean ÷ the full stream: bytes, events after the lists | lists streamed in the owner watches: watches, objects, bytes, gzip-encoded watches; all replicas (the full stream's) |")
	assert.Contains(t, got, "an unfiltered ReplicaSet informer of the driver's", "the note says what the full stream is")
	assert.Contains(t, got, "-sharded-list-and-watch=false", "the note says how to read the owner watch bytes")
	assert.NotContains(t, got, "| kube-controller-manager", "the anchor has no sharded row")
	assert.Contains(t, got, "the anchor")
	header := strings.Split(strings.TrimSpace(got), "\n")[2]
	assert.Equal(t, strings.Count(header, "|"), strings.Count(strings.Split(got, "\n")[4], "|"), "the row has the header's columns")
}

// TestPrintComparisonUnsharded pins that today's table is unchanged when
// the run is not sharded: no sharded section, the same header.
func TestPrintComparisonUnsharded(t *testing.T) {
	c := compareConfig{workload: workload{owners: 1, pods: 2, final: 1}, runs: 1, sharding: sharding{replicas: 1}}
	c.opts.Nodes = 3
	phases := c.phases()
	rs := runResult{phases: make([]measured, len(phases))}
	var b bytes.Buffer
	printComparison(&b, c, []contender{contenders[2]}, phases, [][]runResult{{rs}}, time.Second)
	got := b.String()
	assert.Contains(t, got, "| controller | phase | time to converged status | pod creates | pod deletes | status writes | CPU | kube-apiserver CPU | pod watch data | peak RSS | most pods above desired | failed writes | API requests by verb | API requests by verb and resource |\n")
	assert.NotContains(t, got, "Sharded")
}

// TestPrintShardedReshard: -fault replica-reshard's header names both Ks,
// its columns the fewest old shards held and the time to re-shard, over
// the runs; bytes from 10 MiB are shown in MiB.
func TestPrintShardedReshard(t *testing.T) {
	c := compareConfig{fault: "replica-reshard", faultAfter: 5 * time.Second,
		sharding: sharding{replicas: 2, shards: 4, reshard: 8, serverSide: true}}
	run := func(oldHeld int, resharded time.Duration) runResult {
		return runResult{phases: []measured{{}}, shard: shardResult{replicaRSS: []int64{1 << 10, 1 << 10},
			owner:   []faultproxy.Stats{{ReplicaSetWatchBytes: 12 << 20, ReplicaSetListBytes: 1 << 10}, {ReplicaSetWatchBytes: 10 << 20}},
			oldHeld: oldHeld, resharded: resharded}}
	}
	var b bytes.Buffer
	printSharded(&b, c, []contender{contenders[2]}, [][]runResult{{run(2, 3*time.Second), run(4, time.Second)}})
	got := b.String()
	assert.Contains(t, got, "; fault replica-reshard (SIGTERM, 5s into the scale-up), K 4 → 8\n")
	assert.Contains(t, got, "| old-K shards held between replacements, fewest | re-sharded in |\n")
	assert.Contains(t, got, "| 12.0 MiB | 11.0 MiB | 22.0 MiB | 1 KiB | 0 KiB | —, — | 0, 0 objects, 0 KiB, 0 gzip (0, 0 objects, 0 KiB, 0 gzip) |", "no full stream: no ratio")
	assert.Contains(t, got, "| 3 (2–4) of 4 | 2.0 s (1.0–3.0 s) |\n")
	assert.Contains(t, got, "replica-reshard: each replica in turn gets SIGTERM")
	lines := strings.Split(got, "\n")
	require.True(t, strings.HasPrefix(lines[3], "| controller |"), lines[3])
	assert.Equal(t, strings.Count(lines[3], "|"), strings.Count(lines[5], "|"), "the row has the header's columns")
}
