package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/examples/replicaset/endpoints"
)

// serving is the demo's /metrics, /healthz and /readyz (all off unless
// -metrics-bind-address or -health-probe-bind-address is set).
type serving struct {
	server *endpoints.Server
	// registry is what the controller registers its metrics in; nil when
	// /metrics is off.
	registry prometheus.Registerer
}

// startServing starts the endpoints the flags ask for and announces their
// addresses on out. It serves until stop is called.
func startServing(cfg config, out io.Writer) (*serving, error) {
	s := &serving{server: &endpoints.Server{MetricsAddr: cfg.metricsAddr, ProbeAddr: cfg.probeAddr}}
	if cfg.metricsAddr != "" && cfg.metricsAddr != endpoints.Off {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		s.registry, s.server.Gatherer = reg, reg
	}
	if err := s.server.Start(context.Background()); err != nil {
		return nil, err
	}
	if u := s.server.MetricsURL(); u != "" {
		fmt.Fprintf(out, "serving metrics on %s/metrics\n", u)
	}
	if u := s.server.ProbeURL(); u != "" {
		fmt.Fprintf(out, "serving health probes on %s/healthz and %s/readyz\n", u, u)
	}
	return s, nil
}

// readyWhen makes /readyz answer ok only while ready returns true.
func (s *serving) readyWhen(ready func() bool) {
	s.server.AddReadyzCheck("caches", func(*http.Request) error {
		if !ready() {
			return errors.New("the informers' caches have not synced")
		}
		return nil
	})
}

func (s *serving) stop() {
	s.server.Stop()
	s.server.Wait()
}

// logContext is ctx with the logger the controller's workers log to: klog's,
// or none at -v=0, where the demo's progress lines say what each sync did.
func logContext(ctx context.Context, cfg config) context.Context {
	if cfg.verbosity == "0" {
		return klog.NewContext(ctx, logr.Discard())
	}
	return ctx
}
