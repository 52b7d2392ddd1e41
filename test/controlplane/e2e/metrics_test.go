package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endpointFlags make the examples' ReplicaSet controller serve /metrics and
// the probes on free ports of 127.0.0.1; it prints the addresses it bound.
var endpointFlags = []string{"-metrics-bind-address", "127.0.0.1:0", "-health-probe-bind-address", "127.0.0.1:0"}

// endpoint waits for the controller's line "rscontroller: <what> on <url>"
// (what is "metrics" or "probes") and returns the URL.
func (p *proc) endpoint(t *testing.T, ctx context.Context, what string) string {
	t.Helper()
	prefix := "rscontroller: " + what + " on "
	var url string
	waitFor(t, ctx, time.Minute, "the controller's "+what+" address", func(context.Context) (bool, string, error) {
		b, _ := os.ReadFile(p.out.Name())
		for line := range strings.SplitSeq(string(b), "\n") {
			if u, ok := strings.CutPrefix(line, prefix); ok {
				url = strings.TrimSpace(u)
				return true, "", nil
			}
		}
		return false, "not printed yet", nil
	})
	return url
}

// httpGet returns the status code and body of url.
func httpGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// scraped is one scrape of a /metrics endpoint, parsed with the Prometheus
// text parser.
type scraped map[string]*dto.MetricFamily

// scrape reads and parses url's /metrics.
func scrape(t *testing.T, ctx context.Context, url string) scraped {
	t.Helper()
	code, body, err := httpGet(ctx, url+"/metrics")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	return mfs
}

// sum adds up the counters (or histogram sample counts) of name whose
// labels include want; -1 when the metric is missing.
func (s scraped) sum(name string, want map[string]string) float64 {
	mf, ok := s[name]
	if !ok {
		return -1
	}
	total := 0.0
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetHistogram() != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		}
	}
	return total
}

// resolved is the number of expectation rounds that ended, however.
func (s scraped) resolved() float64 {
	return s.sum("reconcilekit_expectations_resolved_total", nil)
}

// summary is a one-line digest of the controller's own metrics, for the log.
func (s scraped) summary() string {
	var b strings.Builder
	for _, r := range []string{"ok", "deferred", "terminal", "error"} {
		fmt.Fprintf(&b, "syncs %s %.0f, ", r, s.sum("reconcilekit_syncs_total", map[string]string{"result": r}))
	}
	fmt.Fprintf(&b, "pods created %.0f (failed %.0f), deleted %.0f (gone %.0f, failed %.0f), expectation rounds raised %.0f, fulfilled %.0f, by evidence %.0f, expired %.0f",
		s.sum("reconcilekit_pod_creates_total", map[string]string{"result": "created"}),
		s.sum("reconcilekit_pod_creates_total", map[string]string{"result": "failed"}),
		s.sum("reconcilekit_pod_deletes_total", map[string]string{"result": "deleted"}),
		s.sum("reconcilekit_pod_deletes_total", map[string]string{"result": "gone"}),
		s.sum("reconcilekit_pod_deletes_total", map[string]string{"result": "failed"}),
		s.sum("reconcilekit_expectations_raised_total", nil),
		s.sum("reconcilekit_expectations_resolved_total", map[string]string{"resolution": "fulfilled"}),
		s.sum("reconcilekit_expectations_resolved_total", map[string]string{"resolution": "resolved_by_evidence"}),
		s.sum("reconcilekit_expectations_resolved_total", map[string]string{"resolution": "expired"}))
	return b.String()
}

// TestProbesBeforeTheCachesSync: the examples' ReplicaSet controller,
// pointed at an API server that is not there, serves /healthz (the process
// is alive), /metrics (every series at zero) and a failing /readyz: its
// caches never sync. No control plane is needed.
func TestProbesBeforeTheCachesSync(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	nowhere := ln.Addr().String()
	require.NoError(t, ln.Close()) // connections to it are refused
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: nowhere, cluster: {server: "http://%s"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: nowhere, context: {cluster: nowhere, user: u}}]
current-context: nowhere
`, nowhere), 0o600))
	rs, _ := buildControllers(t)
	ctrl := startProc(t, "rscontroller", rs, append([]string{"-kubeconfig", kubeconfig}, endpointFlags...)...)
	probes := ctrl.endpoint(t, ctx, "probes")

	code, body, err := httpGet(ctx, probes+"/readyz")
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, code, "ready without synced caches")
	assert.Contains(t, body, "caches")
	code, _, err = httpGet(ctx, probes+"/healthz")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	m := scrape(t, ctx, ctrl.endpoint(t, ctx, "metrics"))
	assert.Equal(t, 0.0, m.sum("reconcilekit_syncs_total", nil))
	assert.Equal(t, 0.0, m.sum("replicaset_controller_stale_sync_skips_total", nil))
	assert.Equal(t, 0.0, m.sum("workqueue_adds_total", map[string]string{"name": "replicaset"}))
	assert.Equal(t, 0, ctrl.count("caches synced"))
	assert.False(t, ctrl.exited(), "the controller exited")
}

// readyAfterSync checks that the controller's /readyz is ok, and that it
// had printed "caches synced" before: ready only once the caches synced.
func (e *rsEnv) readyAfterSync() {
	e.t.Helper()
	probes := e.ctrl.endpoint(e.t, e.ctx, "probes")
	waitFor(e.t, e.ctx, convergeTimeout, "/readyz ok", func(ctx context.Context) (bool, string, error) {
		synced := e.ctrl.count("rscontroller: caches synced") > 0
		code, body, err := httpGet(ctx, probes+"/readyz")
		if err != nil {
			return false, err.Error(), nil
		}
		if code == http.StatusOK && !synced {
			return false, "", fmt.Errorf("/readyz ok before the caches synced")
		}
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body), nil
	})
}

// podsCreated and podsDeleted are the controller's successful pod creates
// and deletes by its metrics.
func (s scraped) podsCreated() float64 {
	return s.sum("reconcilekit_pod_creates_total", map[string]string{"result": "created"})
}

func (s scraped) podsDeleted() float64 {
	return s.sum("reconcilekit_pod_deletes_total", map[string]string{"result": "deleted"})
}

// freePort returns a port of 127.0.0.1 that was free a moment ago, for a
// server that cannot report the port it bound (controller-runtime's).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
