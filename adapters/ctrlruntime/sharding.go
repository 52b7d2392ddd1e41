package ctrlruntime

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// ForShard returns o restricted to the pods of shard s's owners, for the
// Controller of one held shard (package sharding): its
// [OwnedPods.CacheOptions] also select [sharding.BucketLabel] in s's
// buckets. The stamp is unchanged; the bucket label is put on each created
// pod by the pod client of sharding.WrapCluster. An invalid s is an error.
// The zero OwnedPods restricted to a shard selects the shard's pods among
// every pod.
//
// The owners cannot be selected the same way: controller-runtime's cache
// options carry label and field selectors only, not
// metav1.ListOptions.ShardSelector, so a shard's owner cache holds every
// owner of its namespaces and sharding.WrapCluster filters them on the
// client (client-go informers can use sharding.Shard.TweakOwners).
func (o OwnedPods) ForShard(s sharding.Shard) (OwnedPods, error) {
	r, ok := s.PodRequirement()
	if !ok {
		return OwnedPods{}, fmt.Errorf("ctrlruntime: OwnedPods.ForShard: %w", s.Validate())
	}
	o.shard = labels.NewSelector().Add(r)
	return o, nil
}

// Unsharded returns o restricted to the pods without a valid
// [sharding.BucketLabel] ([sharding.UnstampedRequirement]): those its
// controller created before sharding was turned on, which the holders of their owners' shards stamp
// (sharding.Unstamped). With a stamp the cache holds none of them once
// they are stamped; the zero OwnedPods selects every pod without the
// label, so a controller without a stamp caches every other pod of the
// cluster once more.
func (o OwnedPods) Unsharded() OwnedPods {
	r, ok := sharding.UnstampedRequirement()
	if !ok {
		return o // unreachable: sharding's tests build the requirement
	}
	o.shard = labels.NewSelector().Add(r)
	return o
}

// sameOwned reports whether a and b stamp and select the same pods.
func sameOwned(a, b OwnedPods) bool {
	return maps.Equal(a.owned.Stamp, b.owned.Stamp) && a.owned.DropFinished == b.owned.DropFinished &&
		selectorString(a.shard) == selectorString(b.shard)
}

func selectorString(sel labels.Selector) string {
	if sel == nil {
		return ""
	}
	return sel.String()
}

// ForShard returns p with its pods restricted to shard s's
// ([OwnedPods.ForShard]): build the shard's cache options with the
// returned profile's [Production.CacheOptions] and its Config with it in
// ConfigOptions.Production. The zero Production stays zero: it turns
// nothing on. An invalid s is an error.
func (p Production) ForShard(s sharding.Shard) (Production, error) {
	owned, err := p.owned.ForShard(s)
	if err != nil {
		return Production{}, fmt.Errorf("ctrlruntime: Production.ForShard: %w", err)
	}
	if p.isZero() {
		return p, nil
	}
	p.owned = owned
	return p, nil
}

// Unsharded returns the pods of p without [sharding.BucketLabel], as
// [OwnedPods.Unsharded] does: use its CacheOptions for the cache whose pod
// informer feeds sharding.NewUnstamped. The zero Production stays zero.
func (p Production) Unsharded() Production {
	if p.isZero() {
		return p
	}
	p.owned = p.owned.Unsharded()
	return p
}
