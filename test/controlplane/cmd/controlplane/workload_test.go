package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkloadSingleOwnerIsTodays(t *testing.T) {
	wl := workload{owners: 1, pods: 10000, final: 10, disrupt: 5}
	wl.applyFleetDefaults(map[string]bool{})
	require.NoError(t, wl.validate())
	assert.Equal(t, []string{"web"}, wl.ownerNames())
	assert.Equal(t, []phase{
		{name: "0 → 10000", desired: 10000},
		{name: "delete 5", desired: 10000, disrupt: 5},
		{name: "10000 → 10", desired: 10},
	}, wl.phases(), "one owner: no create phase, the flags' -disrupt and -final")
	assert.Equal(t, 21, wl.nodes())
	assert.Equal(t, 400*time.Second, wl.phaseTimeout())

	wl.lostEvent = true
	ps := wl.phases()
	assert.Equal(t, phase{name: "lost event, 10 → 11", desired: 11, lostEvent: true}, ps[len(ps)-1])
}

func TestWorkloadFleet(t *testing.T) {
	wl := workload{owners: 1000, pods: 10, final: 10, disrupt: 5}
	wl.applyFleetDefaults(map[string]bool{})
	require.NoError(t, wl.validate())
	assert.Equal(t, 1000, wl.disrupt, "10% of the pods")
	assert.Equal(t, 1, wl.final, "all scaled to 1")
	names := wl.ownerNames()
	assert.Len(t, names, 1000)
	assert.Equal(t, "web-0001", names[0])
	assert.Equal(t, "web-1000", names[999])
	assert.IsIncreasing(t, names, "names sort in creation order, and pods' names group by owner")
	assert.Equal(t, []phase{
		{name: "create 1000 at 0", desired: 0, create: true},
		{name: "1000 × 0 → 10", desired: 10},
		{name: "delete 1000", desired: 10, disrupt: 1000},
		{name: "1000 × 10 → 1", desired: 1},
	}, wl.phases())
	assert.Equal(t, 21, wl.nodes(), "sized by owners × pods")
	assert.Equal(t, 400*time.Second, wl.phaseTimeout(), "40 ms per pod")
	assert.Equal(t, 20*time.Minute, workload{owners: 3000, pods: 10}.phaseTimeout())
	assert.Equal(t, 5*time.Minute, workload{owners: 20, pods: 3}.phaseTimeout(), "at least 5 minutes")

	set := workload{owners: 100, pods: 100, final: 7, disrupt: 3}
	set.applyFleetDefaults(map[string]bool{"final": true, "disrupt": true})
	assert.Equal(t, 7, set.final, "flags set by the user win")
	assert.Equal(t, 3, set.disrupt)
}

func TestWorkloadValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		wl   workload
	}{
		{"no owners", workload{owners: 0, pods: 10}},
		{"no pods", workload{owners: 10, pods: 0}},
		{"beyond the pod CIDR", workload{owners: 6001, pods: 10}},
		{"final above pods", workload{owners: 10, pods: 10, final: 11}},
		{"negative final", workload{owners: 1, pods: 10, final: -1}},
		{"disrupt above the pods", workload{owners: 10, pods: 10, disrupt: 101}},
		{"lost event with a fleet", workload{owners: 2, pods: 10, lostEvent: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Error(t, tc.wl.validate())
		})
	}
	assert.NoError(t, workload{owners: 3000, pods: 10, final: 1, disrupt: 3000}.validate())
}

func TestSpreadPick(t *testing.T) {
	names := []string{"a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3", "d1"}
	assert.Equal(t, []string{"a1", "b1", "c1"}, spreadPick(names[:9], 3), "one per owner")
	assert.Equal(t, []string{"a1", "a3", "b2", "c1", "c3"}, spreadPick(names, 5))
	assert.Equal(t, names, spreadPick(names, 10))
	assert.Equal(t, names, spreadPick(names, 20), "at most every name")
	assert.Empty(t, spreadPick(names, 0))
	assert.Empty(t, spreadPick(nil, 3))
	got := spreadPick(names, 4)
	assert.Len(t, got, 4)
	seen := map[string]bool{}
	for _, n := range got {
		assert.False(t, seen[n], "distinct")
		seen[n] = true
	}
}

func TestFormatVerbs(t *testing.T) {
	assert.Equal(t, "create 1000 · update 440 · delete 2 · list 2 · watch 4 · bogus 1",
		formatVerbs([]map[string]int{
			{"watch": 4, "list": 2, "create": 1000, "update": 444, "delete": 2, "bogus": 1},
			{"watch": 4, "list": 2, "create": 1000, "update": 440, "delete": 2, "bogus": 1},
			{"watch": 5, "list": 2, "create": 1000, "update": 400, "bogus": 1, "get": 1},
		}), "medians over the runs, writes before reads, unknown verbs last; a verb whose median is 0 left out")
	assert.Equal(t, "", formatVerbs([]map[string]int{{}, nil}))
	assert.Equal(t, "get 2", formatVerbs([]map[string]int{{"get": 1}, {"get": 3}}), "median of an even count")
}

func TestFlagsInUsage(t *testing.T) {
	usage := `Usage of podset:
  -burst int
    	client burst (default 200)
  -exact
    	exact expectations
  -kubeconfig string
    	Paths to a kubeconfig.
  -qps float
    	client QPS (default 100)
  -zap-log-level value
    	Zap Level
`
	assert.Equal(t, map[string]bool{"qps": true, "burst": true}, flagsInUsage(usage, "qps", "burst", "workers"))
	assert.Empty(t, flagsInUsage("", "qps"))
}

func TestForEach(t *testing.T) {
	var calls atomic.Int64
	var hit [100]atomic.Bool
	require.NoError(t, forEach(context.Background(), 100, 7, func(_ context.Context, i int) error {
		calls.Add(1)
		hit[i].Store(true)
		return nil
	}))
	assert.EqualValues(t, 100, calls.Load())
	for i := range hit {
		assert.True(t, hit[i].Load(), "index %d", i)
	}

	boom := errors.New("boom")
	calls.Store(0)
	err := forEach(context.Background(), 1000, 2, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return ctx.Err()
	})
	assert.ErrorIs(t, err, boom)
	assert.Less(t, calls.Load(), int64(1000), "the calls after the error are skipped")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, forEach(ctx, 10, 2, func(context.Context, int) error { return nil }), context.Canceled)
	assert.NoError(t, forEach(context.Background(), 0, 4, func(context.Context, int) error { return boom }), "nothing to do")
}
