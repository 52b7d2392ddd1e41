package conformance

import (
	"fmt"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	serversharding "k8s.io/apiserver/pkg/sharding"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// shardCounts are the shard counts whose selectors are compared: whole and
// uneven divisions of the 256 buckets, the default, one bucket per shard.
var shardCounts = []int{1, 2, 3, 4, 7, 16, 100, 256}

// uidGen draws the UIDs an owner can have: random UUIDs as an API server
// generates them, uuid-shaped strings, and any string.
var uidGen = rapid.Custom(func(t *rapid.T) types.UID {
	switch rapid.IntRange(0, 3).Draw(t, "uidKind") {
	case 0:
		return uuid.NewUUID()
	case 1:
		return types.UID(rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).Draw(t, "uuid"))
	default:
		return types.UID(rapid.String().Draw(t, "anyUID"))
	}
})

// TestShardingHashMatchesUpstream: sharding.Hash, printed as 16 hex
// digits, is the hash KEP-5866's shardRange compares
// (k8s.io/apimachinery/pkg/sharding.HashField).
func TestShardingHashMatchesUpstream(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			uid := uidGen.Draw(t, "uid")
			addCases(1)
			if got, want := fmt.Sprintf("%016x", sharding.Hash(uid)), apisharding.HashField(string(uid)); got != want {
				t.Fatalf("Hash(%q) = %s, upstream HashField = %s", uid, got, want)
			}
		})
	})
}

// upstreamShard is one shard with its Selector parsed by the API server's
// shard selector parser (k8s.io/apiserver/pkg/sharding.Parse).
type upstreamShard struct {
	shard    sharding.Shard
	selector apisharding.Selector
}

// upstreamShards parses the selector of every shard of every count in
// shardCounts with the API server's parser and checks the range it names:
// object.metadata.uid over [first<<56, end<<56) of the shard's buckets
// [i*256/K, (i+1)*256/K), and that upstream prints it back as ours.
func upstreamShards(t *testing.T) map[int][]upstreamShard {
	t.Helper()
	bound := func(b int) string {
		if b == sharding.Buckets {
			return "0x10000000000000000"
		}
		return fmt.Sprintf("0x%016x", uint64(b)<<56)
	}
	shards := map[int][]upstreamShard{}
	for _, k := range shardCounts {
		for i := range k {
			s := sharding.Shard{Index: i, Count: k}
			sel, err := serversharding.Parse(s.Selector())
			if err != nil {
				t.Fatalf("shard %v: upstream refuses %q: %v", s, s.Selector(), err)
			}
			want := apisharding.ShardRangeRequirement{
				Key:   "object.metadata.uid",
				Start: bound(i * sharding.Buckets / k),
				End:   bound((i + 1) * sharding.Buckets / k),
			}
			if reqs := sel.Requirements(); len(reqs) != 1 || reqs[0] != want {
				t.Fatalf("shard %v: %q parses to %+v, want %+v", s, s.Selector(), reqs, want)
			}
			if sel.Empty() || sel.String() != s.Selector() {
				t.Fatalf("shard %v: %q parses to a selector printed %q (empty %v)", s, s.Selector(), sel.String(), sel.Empty())
			}
			// The selector a client builds from the same bounds is the same.
			built := apisharding.NewSelector(want)
			if built.String() != s.Selector() {
				t.Fatalf("shard %v: NewSelector(%+v) = %q, ours %q", s, want, built.String(), s.Selector())
			}
			shards[k] = append(shards[k], upstreamShard{shard: s, selector: sel})
		}
	}
	return shards
}

// fatalfer is what matchesShards needs of a *testing.T or a *rapid.T.
type fatalfer interface {
	Helper()
	Fatalf(format string, args ...any)
}

// matchesShards checks that the owner with uid is matched by upstream's
// selector of exactly the shards of k that contain it, and that Of names it.
func matchesShards(tb fatalfer, shards []upstreamShard, uid types.UID) {
	tb.Helper()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: uid}}
	k := shards[0].shard.Count
	of, err := sharding.Of(uid, k)
	if err != nil {
		tb.Fatalf("Of(%q, %d): %v", uid, k, err)
	}
	matched := 0
	for _, us := range shards {
		addCases(1)
		got, err := us.selector.Matches(rs)
		if err != nil {
			tb.Fatalf("upstream %q on uid %q: %v", us.selector, uid, err)
		}
		if got != us.shard.Contains(uid) {
			tb.Fatalf("uid %q (hash %016x): upstream %q matches = %v, shard %v Contains = %v",
				uid, sharding.Hash(uid), us.selector, got, us.shard, us.shard.Contains(uid))
		}
		if got {
			matched++
			if us.shard != of {
				tb.Fatalf("uid %q: upstream %q matches shard %v, Of = %v", uid, us.selector, us.shard, of)
			}
		}
	}
	if matched != 1 {
		tb.Fatalf("uid %q (hash %016x): %d of the %d shards' upstream selectors match, want 1", uid, sharding.Hash(uid), matched, k)
	}
}

// TestShardingSelectorMatchesUpstream: every shard's Selector is a shard
// selector the API server accepts (KEP-5866), and upstream's Selector.Matches
// on an owner agrees with Shard.Contains and Of, for one owner in every
// bucket and for random owners.
func TestShardingSelectorMatchesUpstream(t *testing.T) {
	differential(t, func(t *testing.T) {
		shards := upstreamShards(t)

		// One UID in every bucket, so that every shard's first and last
		// bucket is crossed.
		var perBucket [sharding.Buckets]types.UID
		for i, found := 0, 0; found < sharding.Buckets; i++ {
			uid := types.UID("uid-" + strconv.Itoa(i))
			if b := sharding.Bucket(uid); perBucket[b] == "" {
				perBucket[b] = uid
				found++
			}
		}
		for _, k := range shardCounts {
			for _, uid := range perBucket {
				matchesShards(t, shards[k], uid)
			}
		}

		rapid.Check(t, func(t *rapid.T) {
			k := rapid.SampledFrom(shardCounts).Draw(t, "k")
			matchesShards(t, shards[k], uidGen.Draw(t, "uid"))
		})
	})
}
