// Package sharding runs one controller's owners across several active
// replicas: K shards of the owners' UIDs, a Lease per shard, a Controller
// per held shard with its own caches, expectations, consistency gate and
// fence, and a hand-over that carries the previous holder's last write to
// the next holder's first sync. Without it a reconcilekit controller is
// active-passive, as kube-controller-manager is.
//
//   - [Shard]: shard i of K is the owners whose UID's 64-bit FNV-1a hash
//     (as KEP-5866's shardRange computes it) falls in buckets
//     [i·256/K, (i+1)·256/K) of the hash's top byte. Pods carry their
//     owner's bucket in [BucketLabel], so they never move: not when a shard
//     moves, not when K changes.
//   - [Coordinator]: each replica holds at most ceil(K/N) shards of N live
//     replicas, takes a free shard at once (Lease watch), gives shards back
//     when a replica joins and when it stops, and takes an expired shard
//     after its Lease stayed unchanged for the lease duration.
//   - [Held]: the fence of one shard ([Held.Fence] closes RenewDeadline after
//     the Lease's last successful renewal, as package fencing does for a
//     leader) and the hand-over record ([Held.Wrote], [Held.Resume]).
//   - [WrapCluster]: a Controller's reconcile.Cluster restricted to one
//     shard (owners filtered, pods stamped and counted, first sync held
//     until the caches reach the previous holder's last write).
//   - [Shard.TweakOwners], [DetectFiltering]: owners selected by the API
//     server (metav1.ListOptions.ShardSelector, feature gate
//     ShardedListAndWatch, alpha in v1.36) when it can, else on the client.
//   - [Unstamped]: pods created before sharding was turned on are counted
//     by their owner's shard and stamped once, never orphaned or duplicated.
//
// Sharding adds no field to reconcile.Config: it composes Controllers. The
// protocol and its bounds are in docs/design/sharding.md; the rules in
// docs/rules.md.
package sharding
