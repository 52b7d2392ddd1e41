package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsAnnouncement is the line the replicaset demo prints when it serves
// /metrics ("serving metrics on http://127.0.0.1:PORT/metrics").
const metricsAnnouncement = "serving metrics on "

// metricsPoller scrapes the demo controller's /metrics while it runs and
// keeps the last scrape: the process exits right after its summary, so the
// last scrape is the closest to its final counts.
type metricsPoller struct {
	url    string
	every  time.Duration
	client *http.Client

	mu   sync.Mutex
	last map[string]*dto.MetricFamily
	at   time.Time
	err  error

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startMetricsPoller scrapes url every every until stop.
func startMetricsPoller(ctx context.Context, url string, every time.Duration) *metricsPoller {
	ctx, cancel := context.WithCancel(ctx)
	p := &metricsPoller{url: url, every: every, client: &http.Client{Timeout: 5 * time.Second}, cancel: cancel}
	p.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			p.scrape(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return p
}

// scrape reads /metrics once; a failed scrape keeps the previous one.
func (p *metricsPoller) scrape(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		return
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.err = err
		return
	}
	p.last, p.at, p.err = mfs, time.Now(), nil
}

// stop ends the polling.
func (p *metricsPoller) stop() {
	p.cancel()
	p.wg.Wait()
}

// summary writes the controller's metrics digest; exited is when the demo
// process ended.
func (p *metricsPoller) summary(out io.Writer, exited time.Time) {
	p.mu.Lock()
	last, at, err := p.last, p.at, p.err
	p.mu.Unlock()
	if last == nil {
		fmt.Fprintf(out, "controller metrics: no scrape of %s succeeded (%v)\n", p.url, err)
		return
	}
	writeMetricsSummary(out, last, fmt.Sprintf("%s, last scraped %.1fs before the demo exited", p.url, exited.Sub(at).Seconds()))
}

// writeMetricsSummary writes the few numbers that say how the controller
// did, from one scrape of its /metrics.
func writeMetricsSummary(out io.Writer, mfs map[string]*dto.MetricFamily, source string) {
	v := func(name string, labels ...string) float64 { return metricSum(mfs, name, labels...) }
	fmt.Fprintf(out, "controller metrics (%s):\n", source)
	syncs := v("reconcilekit_syncs_total")
	mean := 0.0
	if n := v("reconcilekit_sync_duration_seconds"); n > 0 {
		mean = histogramSum(mfs, "reconcilekit_sync_duration_seconds") / n
	}
	fmt.Fprintf(out, "  syncs %.0f: %.0f ok, %.0f deferred by the consistency gate, %.0f failed (retried), %.0f terminal; mean %.1f ms\n",
		syncs, v("reconcilekit_syncs_total", "result", "ok"), v("reconcilekit_syncs_total", "result", "deferred"),
		v("reconcilekit_syncs_total", "result", "error"), v("reconcilekit_syncs_total", "result", "terminal"), mean*1000)
	fmt.Fprintf(out, "  gate deferrals by cache (replicaset_controller_stale_sync_skips_total): pods %.0f, replicasets %.0f\n",
		v("replicaset_controller_stale_sync_skips_total", "resource", "pods"), v("replicaset_controller_stale_sync_skips_total", "resource", "replicasets"))
	fmt.Fprintf(out, "  pod creates: %.0f created, %.0f failed, %.0f skipped after a failed batch; pod deletes: %.0f deleted, %.0f already gone, %.0f failed\n",
		v("reconcilekit_pod_creates_total", "result", "created"), v("reconcilekit_pod_creates_total", "result", "failed"),
		v("reconcilekit_pod_creates_total", "result", "skipped"), v("reconcilekit_pod_deletes_total", "result", "deleted"),
		v("reconcilekit_pod_deletes_total", "result", "gone"), v("reconcilekit_pod_deletes_total", "result", "failed"))
	fmt.Fprintf(out, "  expectation rounds: %.0f raised; ended %.0f fulfilled, %.0f resolved by evidence, %.0f expired\n",
		v("reconcilekit_expectations_raised_total"), v("reconcilekit_expectations_resolved_total", "resolution", "fulfilled"),
		v("reconcilekit_expectations_resolved_total", "resolution", "resolved_by_evidence"), v("reconcilekit_expectations_resolved_total", "resolution", "expired"))
	fmt.Fprintf(out, "  deletion age ratio (replicaset_controller_sorting_deletion_age_ratio): %.0f ready victims, %.0f of them below 2\n",
		v("replicaset_controller_sorting_deletion_age_ratio"), histogramBucket(mfs, "replicaset_controller_sorting_deletion_age_ratio", 2))
	fmt.Fprintf(out, "  workqueue replicaset: %.0f adds, %.0f retries\n",
		v("workqueue_adds_total", "name", "replicaset"), v("workqueue_retries_total", "name", "replicaset"))
}

// metricSum adds up name's counters, gauges or histogram sample counts whose
// labels include the given name/value pairs.
func metricSum(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	total := 0.0
	for _, m := range matching(mfs, name, labels...) {
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		case m.GetUntyped() != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total
}

// histogramSum adds up the sample sums of name's histograms.
func histogramSum(mfs map[string]*dto.MetricFamily, name string) float64 {
	total := 0.0
	for _, m := range matching(mfs, name) {
		total += m.GetHistogram().GetSampleSum()
	}
	return total
}

// histogramBucket adds up the cumulative counts of name's buckets with upper
// bound le.
func histogramBucket(mfs map[string]*dto.MetricFamily, name string, le float64) float64 {
	total := 0.0
	for _, m := range matching(mfs, name) {
		for _, b := range m.GetHistogram().GetBucket() {
			if b.GetUpperBound() == le {
				total += float64(b.GetCumulativeCount())
			}
		}
	}
	return total
}

func matching(mfs map[string]*dto.MetricFamily, name string, labels ...string) []*dto.Metric {
	mf, ok := mfs[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			ok = ok && have[labels[i]] == labels[i+1]
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// metricsURL returns the URL a demo output line announces, if it is one.
func metricsURL(line string) (string, bool) {
	_, rest, ok := strings.Cut(line, metricsAnnouncement)
	if !ok {
		return "", false
	}
	return strings.TrimSpace(rest), true
}
