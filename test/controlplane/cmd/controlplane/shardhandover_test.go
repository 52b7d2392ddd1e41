package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The replicas' klog lines pair into hand-overs timed from the giver's
// "Giving a shard back": a take logged a moment before the giver's "Gave a
// shard back" still pairs, the first sync is the taker's first, a
// give-back nobody took counts untaken, and give-backs before since are
// left out.
func TestShardHandOvers(t *testing.T) {
	a := `I1129 19:59:00.000000   11 tick.go:296] "Gave a shard back" shard="1/16" lease="x-1" written="7" err=null runErr=null
I1129 20:00:00.000000   11 tick.go:258] "Giving a shard back" shard="3/16" lease="x-3" reason="SIGTERM" err=null
I1129 20:00:00.150000   11 tick.go:296] "Gave a shard back" shard="3/16" lease="x-3" written="9" err=null runErr=null
I1129 20:00:00.200000   11 tick.go:258] "Giving a shard back" shard="5/16" lease="x-5" reason="SIGTERM" err=null
W1129 20:00:00.210000   11 sharded.go:190] "Stamped pods with their bucket" pods=2 err=null shard="5/16"
I1129 20:00:00.300000   11 tick.go:296] "Gave a shard back" shard="5/16" lease="x-5" written="10" err=null runErr=null
not a klog line shard="3/16"
`
	b := `I1129 19:59:00.500000   22 tick.go:449] "Took a shard" shard="1/16" lease="x-1" resume="7" previousHolder="a"
I1129 20:00:00.100000   22 tick.go:449] "Took a shard" shard="3/16" lease="x-3" resume="9" previousHolder="a"
I1129 20:00:00.300000   22 controller.go:251] "Caches synced" shard="3/16"
I1129 20:00:00.650000   22 sharded.go:255] "First sync of the shard" resume="9" key="compare/web-1" took="250ms" shard="3/16"
I1129 20:00:01.000000   22 sharded.go:255] "First sync of the shard" resume="9" key="compare/web-2" took="1ms" shard="3/16"
`
	lines := append(parseShardLog("a", a, 2026), parseShardLog("b", b, 2026)...)
	require.Len(t, lines, 11, "every klog line naming a shard")
	assert.Equal(t, shardLogLine{proc: "a", msg: "Giving a shard back", shard: "3/16", at: time.Date(2026, 11, 29, 20, 0, 0, 0, time.Local)}, lines[1])

	since := time.Date(2026, 11, 29, 19, 59, 30, 0, time.Local)
	hs := pairHandOvers(lines, since)
	at := func(ms int) time.Time { return time.Date(2026, 11, 29, 20, 0, 0, ms*int(time.Millisecond), time.Local) }
	assert.Equal(t, []shardHandOver{
		{shard: "3/16", from: "a", to: "b", giving: at(0), took: at(100), cached: at(300), syncing: at(400), synced: at(650)},
		{shard: "5/16", from: "a", giving: at(200)},
	}, hs)
	assert.Equal(t, "2 (1 taken, 1 synced); taken 0.10 s, most 0.10 s; caches synced 0.30 s, most 0.30 s; first sync started 0.40 s, most 0.40 s, ended 0.65 s, most 0.65 s", formatHandOvers(hs))
	assert.Equal(t, "—", formatHandOvers(nil))
}

// The others' takes of a stopped replica's shards, named by their Lease's
// previous holder, count from the signal on, each with its taker's first
// sync; the stopped replica's own retakes and others' takes of other
// holders' shards do not.
func TestResyncsOf(t *testing.T) {
	c := `I1129 20:00:05.000000   33 tick.go:449] "Took a shard" shard="1/16" lease="x-1" resume="7" previousHolder="c"
I1129 20:00:10.000000   33 tick.go:449] "Took a shard" shard="2/16" lease="x-2" resume="8" previousHolder="d"
I1129 20:00:16.000000   33 tick.go:449] "Took a shard" shard="3/16" lease="x-3" resume="9" previousHolder="d"
I1129 20:00:16.500000   33 tick.go:449] "Took a shard" shard="4/16" lease="x-4" resume="9" previousHolder="a"
I1129 20:00:17.200000   33 sharded.go:255] "First sync of the shard" resume="9" key="compare/web-1" took="1.5s" shard="3/16"
I1129 20:00:17.300000   33 sharded.go:255] "First sync of the shard" resume="9" key="compare/web-4" shard="4/16"
`
	e := `I1129 20:00:16.100000   44 tick.go:449] "Took a shard" shard="5/16" lease="x-5" resume="9" previousHolder="d"
I1129 20:00:16.900000   44 sharded.go:255] "First sync of the shard" resume="9" key="compare/web-2" took="100ms" shard="5/16"
I1129 20:00:40.000000   44 tick.go:449] "Took a shard" shard="6/16" lease="x-6" resume="9" previousHolder="d"
`
	d := `I1129 20:00:41.000000   55 tick.go:449] "Took a shard" shard="7/16" lease="x-7" resume="9" previousHolder="d"
`
	lines := append(append(parseShardLog("c", c, 2026), parseShardLog("e", e, 2026)...), parseShardLog("d", d, 2026)...)
	at := time.Date(2026, 11, 29, 20, 0, 8, 0, time.Local)
	assert.Equal(t, resyncs{shards: 4, synced: 2, longest: 9200 * time.Millisecond, longestStart: 8800 * time.Millisecond}, resyncsOf(lines, "d", at),
		"2/16, 3/16, 5/16 and 6/16 taken from d; 3/16 and 5/16 synced, the last ending 9.2 s after, the last starting 8.8 s after")
	assert.Equal(t, resyncs{}, resyncsOf(lines, "b", at))
}
