package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// FastPathName is the gauge of the fast paths that rest on
// controller-runtime's or client-go's internals: one series per path a
// controller has (label path: [FastPathPodIndex], [FastPathStoreVersion]),
// 1 while the fast path runs and 0 while the fallback does. The fallback
// gives the same answers (pod index) or turns a guard off (store version),
// so a 0 after an upgrade of controller-runtime or client-go is worth an
// alert: the release changed what the adapters rely on.
const FastPathName = "reconcilekit_fast_path"

// Values of the path label of FastPathName ([FastPaths]' keys).
const (
	// FastPathPodIndex: the pod lookups read controller-runtime's pod
	// index directly, without copying every pod listed
	// (ctrlruntime.Pods.DirectIndex); the fallback lists through the
	// cache reader. Only the Pods ctrlruntime.NewConfig builds have it.
	FastPathPodIndex = "pod_index"
	// FastPathStoreVersion: the informer stores track the version the
	// consistency gate compares the controller's writes with (client-go
	// v0.36 and newer, with its AtomicFIFO feature gate on, its default);
	// the fallback answers "" and the gate never defers. A Config with
	// Cluster.CacheVersions has it.
	FastPathStoreVersion = "store_version"
)

// FastPaths reports, for each fast path cfg's Cluster has, whether it runs
// now: [FastPathPodIndex] when Cluster.Pods has a DirectIndex method (the
// Pods of ctrlruntime.NewConfig), [FastPathStoreVersion] when
// Cluster.CacheVersions has a func (the adapters' CacheVersions read
// client-go's stores). A path cfg does not have is absent. The pod index
// is looked up on each call (it appears once the index is registered), so
// call it after ctrlruntime.Register or AddIndexes. [Instrument] exports
// the same answers, read at each scrape, as [FastPathName]. Safe for
// concurrent use when cfg's Pods is.
func FastPaths[T reconcile.Object](cfg reconcile.Config[T]) map[string]bool {
	return fastPathsOf(cfg.Cluster.Pods, hasVersions(cfg.Cluster.CacheVersions))
}

// directIndex is the method of the Pods whose lookups can read an index
// directly (ctrlruntime.Pods).
type directIndex interface {
	DirectIndex() bool
}

// hasVersions reports whether cv has a version to read.
func hasVersions(cv reconcile.CacheVersions) bool {
	return cv.Pods != nil || cv.Owners != nil
}

// fastPathsOf is FastPaths over the parts of a Config it reads.
func fastPathsOf(pods reconcile.Pods, versions bool) map[string]bool {
	out := map[string]bool{}
	for path, active := range fastPathProbes(pods, versions) {
		out[path] = active()
	}
	return out
}

// fastPathProbes returns, for each fast path of pods and versions, the
// func that reports whether it runs.
func fastPathProbes(pods reconcile.Pods, versions bool) map[string]func() bool {
	probes := map[string]func() bool{}
	if ix, ok := pods.(directIndex); ok {
		probes[FastPathPodIndex] = ix.DirectIndex
	}
	if versions {
		probes[FastPathStoreVersion] = storeversion.Active
	}
	return probes
}

// fastPathGauges returns one FastPathName gauge per fast path of pods and
// versions, read at each scrape.
func fastPathGauges(own prometheus.Labels, pods reconcile.Pods, versions bool) []prometheus.Collector {
	var out []prometheus.Collector
	for path, active := range fastPathProbes(pods, versions) {
		labels := prometheus.Labels{"path": path}
		for k, v := range own {
			labels[k] = v
		}
		out = append(out, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        FastPathName,
			Help:        "1 while a fast path that rests on controller-runtime's or client-go's internals runs, 0 while its fallback does, by path: pod_index (pod lookups read controller-runtime's pod index directly; the fallback copies every pod listed), store_version (the informer stores track the version the consistency gate reads, client-go v0.36+; the fallback turns the gate off). 0 after an upgrade: the release changed what the adapters rely on.",
			ConstLabels: labels,
		}, func() float64 {
			if active() {
				return 1
			}
			return 0
		}))
	}
	return out
}
