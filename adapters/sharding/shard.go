package sharding

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultShards is the number of shards of a [Coordinator] whose
// Options.Shards is 0: enough for up to 16 active replicas, and each
// shard's caches and Lease cost little when fewer replicas run.
const DefaultShards = 16

// Buckets is the number of buckets the hash space is cut into: an owner's
// bucket is the top byte of the 64-bit FNV-1a hash of its UID, and a shard
// is a run of whole buckets. It bounds the number of shards.
const Buckets = 256

// BucketLabel is the label key of the stamp a sharded pod client puts on
// every pod it creates ([PodClient]): the owner's bucket as two lowercase
// hex digits. The bucket depends on the owner's UID only, so a pod keeps its
// label when shards move between replicas and when the number of shards
// changes; a shard's pod cache selects the buckets of the shard.
const BucketLabel = "sharding.reconcilekit.io/bucket"

// uidField is the field the shards hash, in KEP-5866's selector syntax.
const uidField = "object.metadata.uid"

// Hash returns the 64-bit FNV-1a hash of uid, the value KEP-5866's
// shardRange compares (k8s.io/apimachinery/pkg/sharding.HashField prints
// it as 16 hex digits).
func Hash(uid types.UID) uint64 {
	h := fnv.New64a()
	h.Write([]byte(uid)) // a hash.Hash never returns an error
	return h.Sum64()
}

// Bucket returns the bucket of an owner's uid, in [0, Buckets).
func Bucket(uid types.UID) int {
	return int(Hash(uid) >> 56)
}

// BucketValue returns the value of [BucketLabel] for an owner's uid: its
// bucket as two lowercase hex digits.
func BucketValue(uid types.UID) string {
	return bucketValue(Bucket(uid))
}

func bucketValue(b int) string {
	return fmt.Sprintf("%02x", b)
}

// Shard is one of Count shards of a controller's owners, numbered from 0:
// the owners whose UID hashes into buckets [First, End) of [Buckets]. The
// shards of a count cover the buckets once, in order, each with
// Buckets/Count or one more. The zero Shard is invalid ([Shard.Validate]);
// a Shard is a value, safe for concurrent use.
type Shard struct {
	Index int // 0 ≤ Index < Count
	Count int // 1 ≤ Count ≤ Buckets
}

// Of returns the shard of count that holds the owner with uid. A count
// outside [1, Buckets] is an error.
func Of(uid types.UID, count int) (Shard, error) {
	if err := validCount(count); err != nil {
		return Shard{}, err
	}
	b := Bucket(uid)
	// The shard i whose [first(i), first(i+1)) holds b: first is
	// non-decreasing in i, so the first i with first(i+1) > b.
	for i := range count {
		if (Shard{Index: i, Count: count}).end() > b {
			return Shard{Index: i, Count: count}, nil
		}
	}
	return Shard{}, fmt.Errorf("sharding: bucket %d outside every shard of %d", b, count) // unreachable: end(count-1) = Buckets
}

func validCount(count int) error {
	if count < 1 || count > Buckets {
		return fmt.Errorf("sharding: %d shards: want 1 to %d", count, Buckets)
	}
	return nil
}

// Validate returns an error unless 1 ≤ Count ≤ [Buckets] and
// 0 ≤ Index < Count.
func (s Shard) Validate() error {
	if err := validCount(s.Count); err != nil {
		return err
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("sharding: shard %d of %d: want an index from 0 to %d", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// String returns "index/count", e.g. "3/16".
func (s Shard) String() string {
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// first and end bound s's buckets, [first, end); valid s only.
func (s Shard) first() int { return s.Index * Buckets / s.Count }
func (s Shard) end() int   { return (s.Index + 1) * Buckets / s.Count }

// Contains reports whether the owner with uid belongs to s. It is false
// for an invalid s.
func (s Shard) Contains(uid types.UID) bool {
	if s.Validate() != nil {
		return false
	}
	b := Bucket(uid)
	return s.first() <= b && b < s.end()
}

// Selector returns s's owners as a KEP-5866 shard selector
// (metav1.ListOptions.ShardSelector, k8s.io/apimachinery v0.37+):
// shardRange(object.metadata.uid, '0x…', '0x…') over s's hash range, the
// lower bound inclusive, the upper exclusive (up to 0x10000000000000000).
// It is "" for an invalid s.
func (s Shard) Selector() string {
	if s.Validate() != nil {
		return ""
	}
	return "shardRange(" + uidField + ", '" + bound(s.first()) + "', '" + bound(s.end()) + "')"
}

// bound is the hash at the start of bucket b as KEP-5866 writes it: 16
// lowercase hex digits, or 2^64 for b = Buckets.
func bound(b int) string {
	if b >= Buckets {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", uint64(b)<<56)
}

// PodRequirement returns the label requirement that selects the pods of s's
// owners: [BucketLabel] in s's buckets. The second result is false for an
// invalid s.
func (s Shard) PodRequirement() (labels.Requirement, bool) {
	if s.Validate() != nil {
		return labels.Requirement{}, false
	}
	values := make([]string, 0, s.end()-s.first())
	for b := s.first(); b < s.end(); b++ {
		values = append(values, bucketValue(b))
	}
	r, err := labels.NewRequirement(BucketLabel, selection.In, values)
	if err != nil {
		return labels.Requirement{}, false // unreachable: the key and values are valid
	}
	return *r, true
}

// PodSelector returns [Shard.PodRequirement] as a label selector string,
// "sharding.reconcilekit.io/bucket in (00,01,…)"; "" for an invalid s.
func (s Shard) PodSelector() string {
	r, ok := s.PodRequirement()
	if !ok {
		return ""
	}
	return r.String()
}

// UnstampedRequirement returns the label requirement of the pods that
// carry no valid bucket: [BucketLabel] absent, empty or not one of the
// [Buckets] values (notin every value). No shard's pod cache selects them;
// they are the pods an [Unstamped] reads. The second result is false only
// if the requirement cannot be built, which the package's tests rule out.
func UnstampedRequirement() (labels.Requirement, bool) {
	values := make([]string, Buckets)
	for b := range values {
		values[b] = bucketValue(b)
	}
	r, err := labels.NewRequirement(BucketLabel, selection.NotIn, values)
	if err != nil {
		return labels.Requirement{}, false
	}
	return *r, true
}

// UnstampedSelector returns [UnstampedRequirement] as a label selector
// string.
func UnstampedSelector() string {
	r, ok := UnstampedRequirement()
	if !ok {
		return ""
	}
	return r.String()
}
