package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/examples/election"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
)

// setupSharded makes mgr one of the replicas of a sharded deployment
// (-shards K, controller.SetupSharded): this replica holds its share of
// the K shards, each with its own Lease, named by the election's flags
// (-leader-elect-resource-namespace, -leader-elect-resource-name as the
// prefix, the identity and durations), and, for each shard held, a
// controller-runtime cluster of its own from shardCache, a fenced client
// and a controller. SIGTERM stops the manager, which gives every shard
// back. The manager runs without leader election and serves the metrics
// and probes.
func setupSharded(mgr ctrl.Manager, le election.Flags, shards int, shardCache cache.Options, opts controller.Options) error {
	identity := le.Identity
	if identity == "" {
		id, err := election.DefaultIdentity()
		if err != nil {
			return err
		}
		identity = id
	}
	opts.Fence = nil // each shard's fence replaces it
	so := controller.ShardedOptions{
		Cache: shardCache,
		Coordinator: sharding.Options{
			Namespace:     le.Namespace,
			Name:          le.Name,
			Identity:      identity,
			Shards:        shards,
			LeaseDuration: le.LeaseDuration,
			RenewDeadline: le.RenewDeadline,
			RetryPeriod:   le.RetryPeriod,
		},
	}
	if _, err := controller.SetupSharded(mgr, so, opts); err != nil {
		return err
	}
	mgr.GetLogger().WithName("podset").Info("running sharded: the PodSets are filtered client-side (controller-runtime's cache options cannot carry a shard selector), the pods by their bucket label",
		"shards", shards, "identity", identity, "leases", le.Namespace+"/"+le.Name)
	return nil
}
