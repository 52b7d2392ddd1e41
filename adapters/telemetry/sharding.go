package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// The gauges of [Sharding].
const (
	// ShardsHeldName is the number of shards this replica holds and keeps
	// (sharding.Coordinator.Shards), read at each scrape.
	ShardsHeldName = "reconcilekit_sharding_shards_held"
	// ShardFilteringName has one series, label filtering "server-side" or
	// "client-side" (sharding.Filtering.String), always 1: where the
	// owners of this replica's shards are selected. "client-side" on a
	// cluster that should serve ShardedListAndWatch is worth an alert:
	// every replica then caches every owner.
	ShardFilteringName = "reconcilekit_sharding_owner_filtering"
)

// Sharding returns the collector of a sharded replica's gauges,
// [ShardsHeldName] read from coord at each scrape and [ShardFilteringName]
// for filtering (sharding.DetectFiltering's answer). Register it once per
// replica; it is safe for concurrent use. A nil coord reports 0 shards.
func Sharding(coord *sharding.Coordinator, filtering sharding.Filtering) prometheus.Collector {
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: ShardsHeldName,
		Help: "Shards this replica holds and keeps (adapters/sharding).",
	}, func() float64 {
		if coord == nil {
			return 0
		}
		return float64(len(coord.Shards()))
	})
	where := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: ShardFilteringName,
		Help: "Where the owners of this replica's shards are selected: server-side (ShardedListAndWatch) or client-side; always 1.",
	}, []string{"filtering"})
	where.WithLabelValues(filtering.String()).Set(1)
	return collectors{held, where}
}

// collectors is several collectors registered as one.
type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}
