package clientgo

import (
	"fmt"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// ForShard returns o restricted to the pods of shard s's owners, for the
// Controller of one held shard (package sharding): the pod informers of
// its factories also select [sharding.BucketLabel] in s's buckets. The
// stamp is unchanged; the bucket label is put on each created pod by the
// pod client of sharding.WrapCluster. An invalid s is an error. The zero
// OwnedPods restricted to a shard selects the shard's pods among every pod.
func (o OwnedPods) ForShard(s sharding.Shard) (OwnedPods, error) {
	if err := s.Validate(); err != nil {
		return OwnedPods{}, fmt.Errorf("clientgo: OwnedPods.ForShard: %w", err)
	}
	o.shard = s.PodSelector()
	return o, nil
}

// Unsharded returns o restricted to the pods without a valid
// [sharding.BucketLabel] ([sharding.UnstampedSelector]): those its
// controller created before sharding was turned on, which the holders of their owners' shards stamp
// (sharding.Unstamped). With a stamp the informer holds none of them once
// they are stamped; the zero OwnedPods selects every pod without the
// label, so a controller without a stamp caches every other pod of the
// cluster once more.
func (o OwnedPods) Unsharded() OwnedPods {
	o.shard = sharding.UnstampedSelector()
	return o
}

// ForShard returns p with its pods restricted to shard s's
// ([OwnedPods.ForShard]); NewConfig takes the returned profile with the
// factory of its own Factory only. An invalid s is an error.
func (p Production) ForShard(s sharding.Shard) (Production, error) {
	owned, err := p.owned.ForShard(s)
	if err != nil {
		return Production{}, fmt.Errorf("clientgo: Production.ForShard: %w", err)
	}
	p.owned = owned
	return p, nil
}

// Unsharded returns the pods of p without [sharding.BucketLabel], as
// [OwnedPods.Unsharded] does: use its Factory (lean, unfinished, stamped
// pods) for sharding.NewUnstamped.
func (p Production) Unsharded() Production {
	p.owned = p.owned.Unsharded()
	return p
}
