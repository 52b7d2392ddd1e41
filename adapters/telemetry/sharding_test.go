package telemetry_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
)

// TestShardingGauges: a replica that holds nothing yet reports 0 shards and
// the filtering it was given, once registered.
func TestShardingGauges(t *testing.T) {
	for _, f := range []sharding.Filtering{sharding.ClientSide, sharding.ServerSide} {
		reg := prometheus.NewPedanticRegistry()
		require.NoError(t, reg.Register(telemetry.Sharding(nil, f)))
		want := `
# HELP reconcilekit_sharding_owner_filtering Where the owners of this replica's shards are selected: server-side (ShardedListAndWatch) or client-side; always 1.
# TYPE reconcilekit_sharding_owner_filtering gauge
reconcilekit_sharding_owner_filtering{filtering="` + f.String() + `"} 1
# HELP reconcilekit_sharding_shards_held Shards this replica holds and keeps (adapters/sharding).
# TYPE reconcilekit_sharding_shards_held gauge
reconcilekit_sharding_shards_held 0
`
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), telemetry.ShardsHeldName, telemetry.ShardFilteringName))
	}
}
