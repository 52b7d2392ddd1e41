package main

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/examples/election"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
)

// runSharded runs the controller as one of the replicas of a sharded
// deployment (-shards K) until ctx is done (controller.RunSharded): this
// replica holds its share of the K shards, each with its own Lease,
// informers, expectations and fenced client. SIGTERM gives every shard
// back.
func runSharded(ctx context.Context, cfg config, rc *rest.Config, out io.Writer) error {
	identity := cfg.election.Identity
	if identity == "" {
		id, err := election.DefaultIdentity()
		if err != nil {
			return err
		}
		identity = id
	}
	rc.QPS = 100
	rc.Burst = 200
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	srv, err := startServing(cfg, out)
	if err != nil {
		return err
	}
	defer srv.stop()
	srv.readyWhen(func() bool { return true })
	so := controller.ShardedOptions{
		Namespace: cfg.namespace,
		Workers:   cfg.workers,
		Coordinator: sharding.Options{
			Namespace:     cfg.election.Namespace,
			Name:          cfg.election.Name,
			Identity:      identity,
			Shards:        cfg.shards,
			LeaseDuration: cfg.election.LeaseDuration,
			RenewDeadline: cfg.election.RenewDeadline,
			RetryPeriod:   cfg.election.RetryPeriod,
		},
		Metrics: srv.registry,
		Started: func(filtering sharding.Filtering, why string) {
			fmt.Fprintf(out, "replicaset controller running sharded: %d shards, ReplicaSets filtered %s (%s), identity %s\n", cfg.shards, filtering, why, identity)
		},
	}
	return controller.RunSharded(ctx, rc, so, controller.Options{
		Exact:                  cfg.exact,
		DisableConsistencyGate: !cfg.gate,
		StatusInterval:         cfg.statusInterval,
		EventPerBatch:          cfg.eventPerBatch,
	})
}
