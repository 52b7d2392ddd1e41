package sharding_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// An owner's shard depends on its UID and the number of shards only; its
// bucket, the label its pods carry, on its UID only.
func ExampleOf() {
	uid := types.UID("0d3c3e5a-7f4e-4b8e-9a61-2f0c6d1e8b47")
	s, err := sharding.Of(uid, sharding.DefaultShards)
	if err != nil {
		panic(err)
	}
	fmt.Println(s, s.Contains(uid), sharding.BucketValue(uid))
	s4, _ := sharding.Of(uid, 4)
	fmt.Println(s4, s4.Contains(uid))
	// Output:
	// 6/16 true 6d
	// 1/4 true
}

// A shard's selector for a List or Watch (KEP-5866) and for its pod cache.
func ExampleShard_Selector() {
	s := sharding.Shard{Index: 1, Count: 4}
	fmt.Println(s.Selector())
	fmt.Println(sharding.Shard{Index: 3, Count: 64}.PodSelector())
	// Output:
	// shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')
	// sharding.reconcilekit.io/bucket in (0c,0d,0e,0f)
}
