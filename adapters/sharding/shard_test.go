package sharding_test

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// uidOfBucket holds, for every bucket, one UID that hashes into it, so that
// a black-box test can reach each bucket through Contains and Of.
var uidOfBucket = sync.OnceValue(func() [sharding.Buckets]types.UID {
	var uids [sharding.Buckets]types.UID
	found := 0
	for i := 0; found < sharding.Buckets; i++ {
		uid := types.UID("uid-" + strconv.Itoa(i))
		if b := sharding.Bucket(uid); uids[b] == "" {
			uids[b] = uid
			found++
		}
	}
	return uids
})

// wantRange is the documented bucket range of shard i of k: [i*256/k, (i+1)*256/k).
func wantRange(i, k int) (first, end int) {
	return i * sharding.Buckets / k, (i + 1) * sharding.Buckets / k
}

// uidGen draws UIDs: uuid-like strings, arbitrary strings and the empty UID.
func uidGen() *rapid.Generator[types.UID] {
	return rapid.Custom(func(t *rapid.T) types.UID {
		switch rapid.IntRange(0, 2).Draw(t, "uidKind") {
		case 0:
			return types.UID(rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).Draw(t, "uuid"))
		case 1:
			return types.UID(rapid.String().Draw(t, "anyUID"))
		default:
			uids := uidOfBucket()
			return types.UID(rapid.SampledFrom(uids[:]).Draw(t, "bucketUID"))
		}
	})
}

// invalidShardGen draws shards that Validate refuses.
func invalidShardGen() *rapid.Generator[sharding.Shard] {
	return rapid.Custom(func(t *rapid.T) sharding.Shard {
		if rapid.Bool().Draw(t, "badCount") {
			count := rapid.OneOf(rapid.IntRange(-3, 0), rapid.IntRange(sharding.Buckets+1, sharding.Buckets+300)).Draw(t, "count")
			return sharding.Shard{Index: rapid.IntRange(-2, 300).Draw(t, "index"), Count: count}
		}
		count := rapid.IntRange(1, sharding.Buckets).Draw(t, "count")
		index := rapid.OneOf(rapid.IntRange(-300, -1), rapid.IntRange(count, count+300)).Draw(t, "index")
		return sharding.Shard{Index: index, Count: count}
	})
}

// TestHash: the hash is 64-bit FNV-1a, as KEP-5866's shardRange computes it.
func TestHash(t *testing.T) {
	// FNV-1a 64-bit test vectors (Fowler, Noll and Vo's reference table):
	// the function KEP-5866's shardRange hashes with.
	for _, tc := range []struct {
		uid  types.UID
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		t.Run(string(tc.uid), func(t *testing.T) {
			assert.Equal(t, tc.want, sharding.Hash(tc.uid))
			assert.Equal(t, int(tc.want>>56), sharding.Bucket(tc.uid))
			assert.Equal(t, fmt.Sprintf("%02x", tc.want>>56), sharding.BucketValue(tc.uid))
		})
	}
}

func TestBucketProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		uid := uidGen().Draw(t, "uid")
		b := sharding.Bucket(uid)
		require.GreaterOrEqual(t, b, 0)
		require.Less(t, b, sharding.Buckets)
		require.Equal(t, int(sharding.Hash(uid)>>56), b, "the bucket is the hash's top byte")
		v := sharding.BucketValue(uid)
		require.Regexp(t, `^[0-9a-f]{2}$`, v)
		n, err := strconv.ParseUint(v, 16, 8)
		require.NoError(t, err)
		require.Equal(t, b, int(n))
	})
}

// TestValidate: 1 ≤ Count ≤ Buckets and 0 ≤ Index < Count.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shard sharding.Shard
		ok    bool
	}{
		{"zero shard", sharding.Shard{}, false},
		{"count 0", sharding.Shard{Index: 0, Count: 0}, false},
		{"negative count", sharding.Shard{Index: 0, Count: -1}, false},
		{"count 257", sharding.Shard{Index: 0, Count: sharding.Buckets + 1}, false},
		{"negative index", sharding.Shard{Index: -1, Count: 4}, false},
		{"index = count", sharding.Shard{Index: 4, Count: 4}, false},
		{"index > count", sharding.Shard{Index: 9, Count: 4}, false},
		{"only shard", sharding.Shard{Index: 0, Count: 1}, true},
		{"default count", sharding.Shard{Index: 15, Count: sharding.DefaultShards}, true},
		{"one bucket each", sharding.Shard{Index: 255, Count: sharding.Buckets}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.shard.Validate()
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Regexp(t, `^sharding: `, err.Error())
		})
	}
}

func TestString(t *testing.T) {
	assert.Equal(t, "3/16", sharding.Shard{Index: 3, Count: 16}.String())
	assert.Equal(t, "0/1", sharding.Shard{Index: 0, Count: 1}.String())
}

// TestPartition: for every count from 1 to Buckets the shards cover the
// buckets once, in order, each with Buckets/count buckets or one more.
func TestPartition(t *testing.T) {
	uids := uidOfBucket()
	for k := 1; k <= sharding.Buckets; k++ {
		sizes := make([]int, k)
		prev := 0
		for b, uid := range uids {
			var in []int
			for i := range k {
				if (sharding.Shard{Index: i, Count: k}).Contains(uid) {
					in = append(in, i)
				}
			}
			require.Len(t, in, 1, "k=%d: bucket %d is in shards %v", k, b, in)
			i := in[0]
			require.GreaterOrEqual(t, i, prev, "k=%d: bucket %d in shard %d after shard %d", k, b, i, prev)
			require.LessOrEqual(t, i, prev+1, "k=%d: bucket %d skips a shard", k, b)
			prev = i
			sizes[i]++
			first, end := wantRange(i, k)
			require.True(t, first <= b && b < end, "k=%d: bucket %d in shard %d, want [%d, %d)", k, b, i, first, end)

			s, err := sharding.Of(uid, k)
			require.NoError(t, err)
			require.Equal(t, sharding.Shard{Index: i, Count: k}, s, "k=%d bucket %d", k, b)
		}
		require.Equal(t, k-1, prev, "k=%d: the last bucket is in the last shard", k)
		for i, n := range sizes {
			require.True(t, n == sharding.Buckets/k || n == sharding.Buckets/k+1, "k=%d: shard %d has %d buckets", k, i, n)
		}
	}
}

func TestOf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		uid := uidGen().Draw(t, "uid")
		k := rapid.IntRange(1, sharding.Buckets).Draw(t, "k")
		s, err := sharding.Of(uid, k)
		require.NoError(t, err)
		require.NoError(t, s.Validate())
		require.Equal(t, k, s.Count)
		for i := range k {
			other := sharding.Shard{Index: i, Count: k}
			require.Equal(t, i == s.Index, other.Contains(uid), "shard %v of uid %q (bucket %d), %v", s, uid, sharding.Bucket(uid), other)
		}
	})
}

func TestOfBadCount(t *testing.T) {
	for _, k := range []int{-1, 0, sharding.Buckets + 1, 1 << 20} {
		t.Run(strconv.Itoa(k), func(t *testing.T) {
			s, err := sharding.Of("uid", k)
			require.Error(t, err)
			assert.Regexp(t, `^sharding: `, err.Error())
			assert.Equal(t, sharding.Shard{}, s)
		})
	}
}

func TestInvalidShard(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := invalidShardGen().Draw(t, "shard")
		err := s.Validate()
		require.Error(t, err)
		require.Regexp(t, `^sharding: `, err.Error())
		require.False(t, s.Contains(uidGen().Draw(t, "uid")))
		require.Empty(t, s.Selector())
		require.Empty(t, s.PodSelector())
		_, ok := s.PodRequirement()
		require.False(t, ok)
	})
}

// TestSelector: shard i of K names the hash range [i·256/K<<56,
// (i+1)·256/K<<56) in KEP-5866's syntax, the top bound written as 2^64.
func TestSelector(t *testing.T) {
	const (
		zero = "0x0000000000000000"
		top  = "0x10000000000000000"
	)
	sel := func(start, end string) string {
		return "shardRange(object.metadata.uid, '" + start + "', '" + end + "')"
	}
	for _, tc := range []struct {
		shard sharding.Shard
		want  string
	}{
		{sharding.Shard{Index: 0, Count: 1}, sel(zero, top)},
		{sharding.Shard{Index: 0, Count: 2}, sel(zero, "0x8000000000000000")},
		{sharding.Shard{Index: 1, Count: 2}, sel("0x8000000000000000", top)},
		{sharding.Shard{Index: 0, Count: 4}, sel(zero, "0x4000000000000000")},
		{sharding.Shard{Index: 1, Count: 4}, sel("0x4000000000000000", "0x8000000000000000")},
		{sharding.Shard{Index: 2, Count: 4}, sel("0x8000000000000000", "0xc000000000000000")},
		{sharding.Shard{Index: 3, Count: 4}, sel("0xc000000000000000", top)},
		// 256/3 is not whole: buckets [0, 85), [85, 170), [170, 256).
		{sharding.Shard{Index: 0, Count: 3}, sel(zero, "0x5500000000000000")},
		{sharding.Shard{Index: 1, Count: 3}, sel("0x5500000000000000", "0xaa00000000000000")},
		{sharding.Shard{Index: 2, Count: 3}, sel("0xaa00000000000000", top)},
		{sharding.Shard{Index: 255, Count: 256}, sel("0xff00000000000000", top)},
		{sharding.Shard{Index: 4, Count: 3}, ""},
		{sharding.Shard{}, ""},
	} {
		t.Run(tc.shard.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, tc.shard.Selector())
		})
	}
}

var selectorRE = regexp.MustCompile(`^shardRange\(object\.metadata\.uid, '0x([0-9a-f]{16,17})', '0x([0-9a-f]{16,17})'\)$`)

// TestSelectorMatchesContains: the hash range a shard's selector names
// holds exactly the UIDs the shard contains.
func TestSelectorMatchesContains(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, sharding.Buckets).Draw(t, "k")
		s := sharding.Shard{Index: rapid.IntRange(0, k-1).Draw(t, "index"), Count: k}
		m := selectorRE.FindStringSubmatch(s.Selector())
		require.NotNil(t, m, "selector %q", s.Selector())
		start, ok := new(big.Int).SetString(m[1], 16)
		require.True(t, ok)
		end, ok := new(big.Int).SetString(m[2], 16)
		require.True(t, ok)
		require.Negative(t, start.Cmp(end), "empty range in %q", s.Selector())
		uid := uidGen().Draw(t, "uid")
		h := new(big.Int).SetUint64(sharding.Hash(uid))
		require.Equal(t, s.Contains(uid), start.Cmp(h) <= 0 && h.Cmp(end) < 0, "uid %q hash %016x, selector %q", uid, sharding.Hash(uid), s.Selector())
	})
}

// TestPodSelector: a shard's pod selector parses and matches exactly the
// pods whose bucket label is one of the shard's buckets.
func TestPodSelector(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7, 16, 100, 255, 256} {
		for i := range k {
			s := sharding.Shard{Index: i, Count: k}
			sel, err := labels.Parse(s.PodSelector())
			require.NoError(t, err, "shard %v: %q", s, s.PodSelector())
			r, ok := s.PodRequirement()
			require.True(t, ok)
			assert.Equal(t, sharding.BucketLabel, r.Key())
			assert.Equal(t, selection.In, r.Operator())
			assert.Equal(t, r.String(), s.PodSelector())
			first, end := wantRange(i, k)
			for b, uid := range uidOfBucket() {
				pod := labels.Set{sharding.BucketLabel: sharding.BucketValue(uid), "app": "web"}
				want := first <= b && b < end
				require.Equal(t, want, sel.Matches(pod), "shard %v, bucket %d", s, b)
				require.Equal(t, want, r.Matches(pod), "shard %v, bucket %d", s, b)
				require.Equal(t, want, s.Contains(uid), "shard %v, bucket %d", s, b)
			}
			for _, other := range []labels.Set{nil, {"app": "web"}, {sharding.BucketLabel: ""}, {sharding.BucketLabel: "100"}, {sharding.BucketLabel: "0"}, {sharding.BucketLabel: "FF"}} {
				require.False(t, sel.Matches(other), "shard %v matches %v", s, other)
			}
		}
	}
}

var (
	sinkShard sharding.Shard
	sinkBool  bool
)

func BenchmarkOf(b *testing.B) {
	uid := types.UID("6c1f4a0e-3b8d-4f7e-9a52-0d6e1b2c3a4f")
	b.ReportAllocs()
	for b.Loop() {
		s, err := sharding.Of(uid, sharding.DefaultShards)
		if err != nil {
			b.Fatal(err)
		}
		sinkShard = s
	}
}

func BenchmarkContains(b *testing.B) {
	uid := types.UID("6c1f4a0e-3b8d-4f7e-9a52-0d6e1b2c3a4f")
	s := sharding.Shard{Index: 5, Count: sharding.DefaultShards}
	b.ReportAllocs()
	for b.Loop() {
		sinkBool = s.Contains(uid)
	}
}

// TestUnstampedSelector: the pods no shard's pod cache selects are exactly
// those whose bucket label is absent or no bucket value.
func TestUnstampedSelector(t *testing.T) {
	sel, err := labels.Parse(sharding.UnstampedSelector())
	require.NoError(t, err)
	for _, v := range []string{"", "zz", "0", "100", "0A", " 00"} {
		assert.True(t, sel.Matches(labels.Set{sharding.BucketLabel: v}), "bucket %q", v)
	}
	assert.True(t, sel.Matches(labels.Set{"app": "web"}), "no bucket label")
	for b := range sharding.Buckets {
		v := fmt.Sprintf("%02x", b)
		assert.False(t, sel.Matches(labels.Set{sharding.BucketLabel: v}), "bucket %q", v)
		for _, s := range []sharding.Shard{{Index: 0, Count: 1}} {
			shardSel, err := labels.Parse(s.PodSelector())
			require.NoError(t, err)
			assert.True(t, shardSel.Matches(labels.Set{sharding.BucketLabel: v}))
		}
	}
}
