package clientgo

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// WorkqueueMetrics returns a workqueue.MetricsProvider whose metrics live
// in reg, under the names kube-controller-manager and controller-runtime
// export for their queues, labelled by the queue's name:
// workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds and workqueue_retries_total.
// Pass it as the MetricsProvider of the queue's config, with a Name:
//
//	provider, err := clientgo.WorkqueueMetrics(registry)
//	queue := workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
//		workqueue.TypedRateLimitingQueueConfig[string]{Name: "replicaset", MetricsProvider: provider})
//
// A metric already registered in reg under the same name and labels (a
// second provider over the same registry) is shared; another collector
// under one of those names is an error. The provider is safe for
// concurrent use; queues with distinct names get distinct series.
func WorkqueueMetrics(reg prometheus.Registerer) (workqueue.MetricsProvider, error) {
	if reg == nil {
		return nil, errors.New("clientgo: WorkqueueMetrics needs a prometheus.Registerer")
	}
	labels := []string{"name"}
	p := workqueueProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "workqueue", Name: "depth",
			Help: "Current depth of the workqueue.",
		}, labels),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "workqueue", Name: "adds_total",
			Help: "Total number of adds handled by the workqueue.",
		}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: "queue_duration_seconds",
			Help:    "How long in seconds an item stays in the workqueue before being requested.",
			Buckets: prometheus.ExponentialBuckets(10e-9, 10, 10),
		}, labels),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: "work_duration_seconds",
			Help:    "How long in seconds processing an item from the workqueue takes.",
			Buckets: prometheus.ExponentialBuckets(10e-9, 10, 10),
		}, labels),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "workqueue", Name: "unfinished_work_seconds",
			Help: "Seconds of work in progress not yet observed by work_duration_seconds; large values mean stuck workers.",
		}, labels),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "workqueue", Name: "longest_running_processor_seconds",
			Help: "Seconds the longest-running worker of the workqueue has been running.",
		}, labels),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "workqueue", Name: "retries_total",
			Help: "Total number of retries handled by the workqueue.",
		}, labels),
	}
	var err error
	if p.depth, err = register(reg, p.depth); err != nil {
		return nil, err
	}
	if p.adds, err = register(reg, p.adds); err != nil {
		return nil, err
	}
	if p.latency, err = register(reg, p.latency); err != nil {
		return nil, err
	}
	if p.workDuration, err = register(reg, p.workDuration); err != nil {
		return nil, err
	}
	if p.unfinished, err = register(reg, p.unfinished); err != nil {
		return nil, err
	}
	if p.longest, err = register(reg, p.longest); err != nil {
		return nil, err
	}
	if p.retries, err = register(reg, p.retries); err != nil {
		return nil, err
	}
	return p, nil
}

// register registers c in reg, or returns the equal collector already
// there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("clientgo: WorkqueueMetrics: %w", err)
}

// workqueueProvider implements workqueue.MetricsProvider over vectors
// labelled by queue name.
type workqueueProvider struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, workDuration      *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = workqueueProvider{}

func (p workqueueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}

func (p workqueueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}

func (p workqueueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}

func (p workqueueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}

func (p workqueueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}

func (p workqueueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longest.WithLabelValues(name)
}

func (p workqueueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}
