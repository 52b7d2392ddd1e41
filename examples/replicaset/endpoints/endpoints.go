// Package endpoints serves what operators scrape and probe on a client-go
// controller: /metrics (Prometheus text format), /healthz (liveness) and
// /readyz (readiness), on addresses chosen by flags, as controller-runtime's
// manager does with -metrics-bind-address and -health-probe-bind-address.
//
// A check is a named function of the request; an endpoint answers 200 "ok"
// when every check passes and 503 with the failing checks' names and errors
// otherwise. /healthz has a "ping" check that always passes (add the
// leader election's with [Server.AddHealthzCheck], e.g. client-go's
// leaderelection.HealthzAdaptor.Check); /readyz has the checks given with
// [Server.AddReadyzCheck], e.g. "the informers' caches have synced".
package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Off is the address value that turns an endpoint off, as in
// controller-runtime ("" does too).
const Off = "0"

// Check is one named health or readiness check: nil means it passes.
type Check struct {
	Name  string
	Check func(*http.Request) error
}

// Server serves /metrics on MetricsAddr and /healthz and /readyz on
// ProbeAddr. The zero Server serves nothing; set the fields before
// [Server.Start]. Checks may be added at any time; they are safe for
// concurrent use with the serving.
type Server struct {
	// MetricsAddr is the address of /metrics, e.g. "127.0.0.1:8080";
	// "" or "0": off. Port 0 picks a free port ([Server.MetricsURL]).
	MetricsAddr string
	// ProbeAddr is the address of /healthz and /readyz; "" or "0": off.
	ProbeAddr string
	// Gatherer is what /metrics serves; nil: prometheus.DefaultGatherer.
	Gatherer prometheus.Gatherer

	mu             sync.Mutex
	healthz        []Check
	readyz         []Check
	metricsURL     string
	probeURL       string
	servers        []*http.Server
	wg             sync.WaitGroup
	started, ended bool
	stopped        chan struct{} // closed by Stop
}

// AddHealthzCheck adds a check to /healthz.
func (s *Server) AddHealthzCheck(name string, check func(*http.Request) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.healthz = append(s.healthz, Check{Name: name, Check: check})
}

// AddReadyzCheck adds a check to /readyz.
func (s *Server) AddReadyzCheck(name string, check func(*http.Request) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readyz = append(s.readyz, Check{Name: name, Check: check})
}

// Start binds the addresses that are not off and serves them in the
// background until ctx is done or [Server.Stop] is called. A bind error is
// returned at once, with nothing left running. Start may be called once.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("endpoints: Start called twice")
	}
	s.started = true
	s.stopped = make(chan struct{})
	gatherer := s.Gatherer
	if gatherer == nil {
		gatherer = prometheus.DefaultGatherer
	}
	type served struct {
		addr string
		ln   net.Listener
		mux  *http.ServeMux
		url  *string
	}
	var todo []served
	if on(s.MetricsAddr) {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
		todo = append(todo, served{addr: s.MetricsAddr, mux: mux, url: &s.metricsURL})
	}
	if on(s.ProbeAddr) {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", s.handler(func() []Check { return s.healthz }, true))
		mux.HandleFunc("/readyz", s.handler(func() []Check { return s.readyz }, false))
		todo = append(todo, served{addr: s.ProbeAddr, mux: mux, url: &s.probeURL})
	}
	for i := range todo {
		ln, err := net.Listen("tcp", todo[i].addr)
		if err != nil {
			for _, d := range todo[:i] {
				d.ln.Close()
			}
			return fmt.Errorf("endpoints: %w", err)
		}
		todo[i].ln = ln
		*todo[i].url = "http://" + ln.Addr().String()
	}
	for _, d := range todo {
		srv := &http.Server{Handler: d.mux, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		s.wg.Go(func() { _ = srv.Serve(d.ln) })
	}
	stopped := s.stopped
	s.wg.Go(func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-stopped:
		}
	})
	return nil
}

// Stop closes the listeners and waits for the handlers in flight, at most
// five seconds. It may be called more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	servers := s.servers
	if s.stopped != nil {
		close(s.stopped)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(ctx)
	}
}

// Wait returns once the servers have stopped (after Stop, or ctx's end).
func (s *Server) Wait() { s.wg.Wait() }

// MetricsURL is the base URL /metrics is served under ("http://host:port"),
// once Start has bound it; "" when off.
func (s *Server) MetricsURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metricsURL
}

// ProbeURL is the base URL of /healthz and /readyz, once Start has bound
// it; "" when off.
func (s *Server) ProbeURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probeURL
}

// handler runs the checks checks returns; withPing adds a passing "ping".
func (s *Server) handler(checks func() []Check, withPing bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		list := append([]Check(nil), checks()...)
		s.mu.Unlock()
		if withPing {
			list = append([]Check{{Name: "ping", Check: func(*http.Request) error { return nil }}}, list...)
		}
		var failed []string
		for _, c := range list {
			if err := c.Check(r); err != nil {
				failed = append(failed, fmt.Sprintf("[-]%s failed: %v", c.Name, err))
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, strings.Join(failed, "\n"))
			return
		}
		fmt.Fprint(w, "ok")
	}
}

func on(addr string) bool { return addr != "" && addr != Off }
