package endpoints_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/examples/replicaset/endpoints"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// /readyz fails until its check passes; /healthz has ping plus the checks
// added; /metrics serves the Gatherer.
func TestServer(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "demo_total", Help: "A counter."})
	reg.MustRegister(c)
	c.Inc()
	var synced, leading atomic.Bool
	leading.Store(true)
	s := &endpoints.Server{MetricsAddr: "127.0.0.1:0", ProbeAddr: "127.0.0.1:0", Gatherer: reg}
	s.AddReadyzCheck("caches", func(*http.Request) error {
		if !synced.Load() {
			return errors.New("the informers' caches have not synced")
		}
		return nil
	})
	s.AddHealthzCheck("leaderElection", func(*http.Request) error {
		if !leading.Load() {
			return errors.New("lease not renewed")
		}
		return nil
	})
	require.NoError(t, s.Start(t.Context()))
	t.Cleanup(func() { s.Stop(); s.Wait() })

	code, body := get(t, s.ProbeURL()+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "[-]caches failed: the informers' caches have not synced")
	synced.Store(true)
	code, body = get(t, s.ProbeURL()+"/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)

	code, _ = get(t, s.ProbeURL()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	leading.Store(false)
	code, body = get(t, s.ProbeURL()+"/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "leaderElection")

	code, body = get(t, s.MetricsURL()+"/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "demo_total 1")
	assert.Error(t, s.Start(t.Context()), "a second Start")
}

// Off ("0" or "") binds nothing; a taken address is an error and leaves
// nothing running.
func TestServerOffAndBindErrors(t *testing.T) {
	s := &endpoints.Server{MetricsAddr: endpoints.Off}
	require.NoError(t, s.Start(t.Context()))
	assert.Empty(t, s.MetricsURL())
	assert.Empty(t, s.ProbeURL())
	s.Stop()
	s.Wait()

	taken := &endpoints.Server{ProbeAddr: "127.0.0.1:0"}
	require.NoError(t, taken.Start(t.Context()))
	t.Cleanup(func() { taken.Stop(); taken.Wait() })
	clash := &endpoints.Server{MetricsAddr: "127.0.0.1:0", ProbeAddr: strings.TrimPrefix(taken.ProbeURL(), "http://")}
	err := clash.Start(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "endpoints:")
}
