package faultproxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Options configure [Start].
type Options struct {
	// Upstream is kube-apiserver's base URL, e.g. https://127.0.0.1:6443;
	// required.
	Upstream *url.URL
	// UpstreamTLS configures the connection to Upstream (RootCAs: the
	// cluster's CA); nil means Go's defaults (system roots). The client's
	// own credentials (its Authorization header) are passed through.
	UpstreamTLS *tls.Config
	// Certificate is what the proxy serves to its client; required. The
	// client must trust it for 127.0.0.1 (kube-apiserver's own serving
	// certificate does, when it lists 127.0.0.1).
	Certificate tls.Certificate
	// Clock times the delays; nil means real time.
	Clock clock.Clock
	// ErrorLog receives the proxy's errors (an unreachable upstream, a
	// stream cut short); nil discards them.
	ErrorLog io.Writer
}

// Stats counts what the proxy has served since [Start].
type Stats struct {
	// Requests is every request received.
	Requests int64
	// PodWatches is the pod watch requests among them that the API server
	// answered (those the delay applies to; held ones are not among them).
	PodWatches int64
	// PodWatchBytesIn is the bytes of pod watch responses received from
	// the API server, PodWatchBytesOut those handed on to the client; the
	// difference is what the delay holds back.
	PodWatchBytesIn, PodWatchBytesOut int64
	// PodWatchesCut is the pod watches ended by [Proxy.CutPodWatches];
	// PodWatchesHeld the pod watch requests refused while
	// [Proxy.HoldPodWatches] was on.
	PodWatchesCut, PodWatchesHeld int64
	// PodCreateResponsesDropped is the pod creates whose response
	// [Proxy.DropPodCreateResponses] replaced with an error.
	PodCreateResponsesDropped int64
	// WritesFailed is the writes [Proxy.FailWrites] refused.
	WritesFailed int64
	// PodWatchesExpired is the pod watch requests
	// [Proxy.ExpirePodWatchesBefore] refused.
	PodWatchesExpired int64
	// ReplicaSetWatchBytes is the bytes of ReplicaSet watch responses
	// ([IsReplicaSetWatch]) received from the API server, and
	// ReplicaSetListBytes those of ReplicaSet list responses
	// ([IsReplicaSetList]): the bodies as it sent them (compressed when it
	// compressed them), each handed on at once and unaltered.
	ReplicaSetWatchBytes, ReplicaSetListBytes int64
	// ReplicaSetWatches is the ReplicaSet watch responses received,
	// ReplicaSetWatchesWithInitialEvents those of requests with
	// sendInitialEvents=true (a client-go informer's streaming list: the
	// first, and each one again after an expired watch; not a resumed
	// watch), and ReplicaSetWatchesCompressed those kube-apiserver sent
	// gzip-encoded (it does so with initial events when the client
	// accepts gzip, since v1.37).
	ReplicaSetWatches, ReplicaSetWatchesWithInitialEvents, ReplicaSetWatchesCompressed int64
	// ReplicaSetInitialEvents and ReplicaSetWatchEvents are the events of
	// the ReplicaSet watches (frames of a protobuf stream, lines of a JSON
	// one, decoded when compressed; bookmarks among them) that start
	// before and after the end of a watch's initial events: the
	// "k8s.io/initial-events-end" annotation of the bookmark that ends
	// them. ReplicaSetInitialEventsBytes is the part of
	// ReplicaSetWatchBytes up to that end (of a compressed watch, to
	// within one read); a watch that ends before it counts whole.
	ReplicaSetInitialEvents, ReplicaSetWatchEvents, ReplicaSetInitialEventsBytes int64
}

// Proxy is a running fault proxy made by [Start]. Its methods are safe for
// concurrent use. The caller must call [Proxy.Close].
type Proxy struct {
	url       string
	clock     clock.Clock
	server    *http.Server
	transport *http.Transport
	closing   chan struct{} // closed by Close: every delayed read gives up
	served    chan struct{} // closed when server.Serve has returned

	requests, podWatches, bytesIn, bytesOut               atomic.Int64
	watchesCut, watchesHeld, createsDropped, writesFailed atomic.Int64
	watchesExpired, rsWatchBytes, rsListBytes             atomic.Int64
	rsWatches, rsInitialWatches, rsInitialBytes           atomic.Int64
	rsWatchEvents, rsInitialEvents, rsGzipWatches         atomic.Int64

	mu sync.Mutex
	// delay is the pod watch delay; changed is closed (and replaced) when
	// it changes, waking every delayed read to re-time its bytes.
	delay   time.Duration
	changed chan struct{}
	closed  bool
	// active counts the handlers and watch readers running, so that Close
	// can wait for them; Add happens under mu while !closed.
	active sync.WaitGroup
	// upstreamConns are the open connections to the API server, which
	// Close closes (the transport only closes idle ones).
	upstreamConns map[*upstreamConn]struct{}

	// The faults decided as a request arrives (see admit) or as its
	// response does.
	//
	// holdWatches refuses new pod watches; cut is closed (and replaced) by
	// CutPodWatches, ending the pod watches admitted before.
	holdWatches bool
	cut         chan struct{}
	// expireBefore is the version pod watches must resume from at least
	// (0: none is expired).
	expireBefore uint64
	// dropCreates is how many more pod create responses to drop.
	dropCreates int
	// failPPM is the fraction of writes to fail in millionths, failCode
	// their status; writes and failed count since FailWrites.
	failPPM, writes, failed int64
	failCode                int
}

// upstreamConn is a connection to the API server that leaves
// Proxy.upstreamConns when closed.
type upstreamConn struct {
	net.Conn
	p    *Proxy
	once sync.Once
}

func (c *upstreamConn) Close() error {
	c.once.Do(func() {
		c.p.mu.Lock()
		delete(c.p.upstreamConns, c)
		c.p.mu.Unlock()
	})
	return c.Conn.Close()
}

// dial opens a connection to the API server, tracked until it is closed.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &upstreamConn{Conn: conn, p: p}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		conn.Close()
		return nil, errClosed
	}
	p.upstreamConns[c] = struct{}{}
	return c, nil
}

// Start starts a proxy on 127.0.0.1 with a free port in front of
// opts.Upstream, with no fault injected. It starts the server's goroutine;
// [Proxy.Close] stops it.
func Start(opts Options) (*Proxy, error) {
	if opts.Upstream == nil || opts.Upstream.Scheme == "" || opts.Upstream.Host == "" {
		return nil, errors.New("faultproxy: Options.Upstream must be an absolute URL")
	}
	if len(opts.Certificate.Certificate) == 0 {
		return nil, errors.New("faultproxy: Options.Certificate is required")
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	errLog := opts.ErrorLog
	if errLog == nil {
		errLog = io.Discard
	}
	var upstreamTLS *tls.Config
	if opts.UpstreamTLS != nil {
		upstreamTLS = opts.UpstreamTLS.Clone()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{
		url:           "https://" + l.Addr().String(),
		clock:         clk,
		closing:       make(chan struct{}),
		served:        make(chan struct{}),
		changed:       make(chan struct{}),
		cut:           make(chan struct{}),
		upstreamConns: map[*upstreamConn]struct{}{},
	}
	p.transport = &http.Transport{
		Proxy:               nil, // never an HTTP(S)_PROXY from the environment
		DialContext:         p.dial,
		TLSClientConfig:     upstreamTLS,
		ForceAttemptHTTP2:   true,
		DisableCompression:  true, // pass Accept-Encoding and bodies through as they are
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
	upstream := *opts.Upstream
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&upstream)
			// Rewrite drops these from the outbound request; put back
			// what the client sent, so that nothing is altered.
			for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := r.In.Header[h]; ok {
					r.Out.Header[h] = v
				}
			}
		},
		Transport:      p.transport,
		FlushInterval:  -1, // flush after every write: watches must never wait in a buffer
		ModifyResponse: p.modifyResponse,
		ErrorLog:       log.New(errLog, "faultproxy: ", 0),
	}
	p.server = &http.Server{
		Handler:           p.track(rp),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{opts.Certificate}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(errLog, "faultproxy: ", 0),
	}
	go func() {
		defer close(p.served)
		// ServeTLS adds h2 to the TLS config: HTTP/2 and HTTP/1.1 clients.
		_ = p.server.ServeTLS(l, "", "")
	}()
	return p, nil
}

// URL is the proxy's base URL, https://127.0.0.1:port: the server of the
// client's kubeconfig.
func (p *Proxy) URL() string { return p.url }

// SetPodWatchDelay sets the pod watch delay; d <= 0 means none. It applies
// at once to the bytes already buffered: each is released d after it
// arrived from the API server (at once if that time has passed), in order.
func (p *Proxy) SetPodWatchDelay(d time.Duration) {
	if d < 0 {
		d = 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d == p.delay {
		return
	}
	p.delay = d
	close(p.changed)
	p.changed = make(chan struct{})
}

// PodWatchDelay returns the current pod watch delay.
func (p *Proxy) PodWatchDelay() time.Duration {
	d, _ := p.delayState()
	return d
}

func (p *Proxy) delayState() (time.Duration, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay, p.changed
}

// Stats returns the request counts so far.
func (p *Proxy) Stats() Stats {
	return Stats{Requests: p.requests.Load(), PodWatches: p.podWatches.Load(),
		PodWatchBytesIn: p.bytesIn.Load(), PodWatchBytesOut: p.bytesOut.Load(),
		PodWatchesCut: p.watchesCut.Load(), PodWatchesHeld: p.watchesHeld.Load(),
		PodCreateResponsesDropped: p.createsDropped.Load(), WritesFailed: p.writesFailed.Load(),
		PodWatchesExpired: p.watchesExpired.Load(), ReplicaSetWatchBytes: p.rsWatchBytes.Load(),
		ReplicaSetListBytes: p.rsListBytes.Load(), ReplicaSetWatches: p.rsWatches.Load(),
		ReplicaSetWatchesWithInitialEvents: p.rsInitialWatches.Load(), ReplicaSetInitialEventsBytes: p.rsInitialBytes.Load(),
		ReplicaSetWatchEvents: p.rsWatchEvents.Load(), ReplicaSetInitialEvents: p.rsInitialEvents.Load(),
		ReplicaSetWatchesCompressed: p.rsGzipWatches.Load()}
}

// Close stops the proxy: it closes the listener and every client
// connection, ends every open request (buffered watch bytes are dropped) and
// returns when every goroutine the proxy started has returned. It is
// idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.closing)
	p.mu.Unlock()
	err := p.server.Close()
	<-p.served
	p.active.Wait()
	p.transport.CloseIdleConnections()
	p.mu.Lock()
	conns := make([]*upstreamConn, 0, len(p.upstreamConns))
	for c := range p.upstreamConns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	if err != nil {
		return fmt.Errorf("faultproxy: %w", err)
	}
	return nil
}

// enter registers a running handler or reader; false once Close has begun.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.active.Add(1)
	return true
}

// cutKey is the request context key of the cut channel of a pod watch.
type cutKey struct{}

// track counts the requests, lets Close wait for their handlers, and
// answers those a fault refuses.
func (p *Proxy) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.enter() {
			http.Error(w, "faultproxy: closed", http.StatusServiceUnavailable)
			return
		}
		defer p.active.Done()
		p.requests.Add(1)
		refusal, cut := p.admit(r)
		if refusal != nil {
			refusal.write(w)
			return
		}
		if cut != nil {
			r = r.WithContext(context.WithValue(r.Context(), cutKey{}, cut))
		}
		next.ServeHTTP(w, r)
	})
}

// admit applies the faults decided as a request arrives, under one lock so
// that each command takes effect between two requests: a held pod watch or
// a failed write gets a refusal, which the proxy answers in the API
// server's place; a pod watch let through gets the channel whose closing
// cuts it.
func (p *Proxy) admit(r *http.Request) (refusal *status, cut <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case IsPodWatch(r):
		if p.holdWatches {
			p.watchesHeld.Add(1)
			return &heldWatch, nil
		}
		if p.expired(r) {
			p.watchesExpired.Add(1)
			return &expiredWatch, nil
		}
		return nil, p.cut
	case isWrite(r.Method) && p.failNextWrite():
		p.writesFailed.Add(1)
		return failedWrite(p.failCode), nil
	}
	return nil, nil
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	if _, ok := resp.Header["Content-Type"]; !ok {
		// Keep the server from sniffing and adding one.
		resp.Header["Content-Type"] = nil
	}
	if IsPodCreate(resp.Request) && resp.StatusCode/100 == 2 && p.dropCreate() {
		// The pod exists: read the answer to the end, so that the
		// connection stays usable, and answer the client in its place.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		p.createsDropped.Add(1)
		droppedCreate.replace(resp)
		return nil
	}
	switch {
	case IsReplicaSetWatch(resp.Request):
		p.rsWatches.Add(1)
		initial := withInitialEvents(resp.Request)
		if initial {
			p.rsInitialWatches.Add(1)
		}
		if resp.Header.Get("Content-Encoding") == "gzip" {
			p.rsGzipWatches.Add(1)
		}
		resp.Body = newWatchBody(resp, initial, watchCounts{bytes: &p.rsWatchBytes, initialBytes: &p.rsInitialBytes,
			initialEvents: &p.rsInitialEvents, events: &p.rsWatchEvents})
		return nil
	case IsReplicaSetList(resp.Request):
		resp.Body = countedBody{resp.Body, &p.rsListBytes}
		return nil
	case !IsPodWatch(resp.Request):
		return nil
	}
	p.podWatches.Add(1)
	if !p.enter() {
		return errors.New("closed")
	}
	cut, _ := resp.Request.Context().Value(cutKey{}).(<-chan struct{})
	resp.Body = p.delayBody(resp.Request.Context(), resp.Body, cut)
	return nil
}

// status is an error the proxy answers with in the API server's place: a
// Kubernetes Status in JSON, which client-go turns into the apierrors error
// of its reason. A 429 carries Retry-After: 1 (and the same in the Status's
// details), as kube-apiserver's own do.
type status struct {
	code    int
	reason  metav1.StatusReason
	message string
}

func (s status) encode() (http.Header, []byte) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  s.message,
		Reason:   s.reason,
		Code:     int32(s.code),
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if s.code == http.StatusTooManyRequests {
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
		h.Set("Retry-After", "1")
	}
	body, _ := json.Marshal(st) // plain fields: it cannot fail
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return h, body
}

// write answers a request with s.
func (s status) write(w http.ResponseWriter) {
	h, body := s.encode()
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(s.code)
	_, _ = w.Write(body)
}

// replace makes resp s, in place of what the API server answered.
func (s status) replace(resp *http.Response) {
	h, body := s.encode()
	resp.StatusCode = s.code
	resp.Status = fmt.Sprintf("%d %s", s.code, http.StatusText(s.code))
	resp.Header = h
	resp.Trailer = nil
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(bytes.NewReader(body))
}

// IsPodWatch reports whether r is a pod watch: a GET of the core group's
// pods, cluster-wide or in one namespace, with watch=true (or 1), or the
// same under the deprecated /api/v1/watch/ prefix. A watch of one named pod
// (…/pods/name) is not one, nor is a subresource.
func IsPodWatch(r *http.Request) bool {
	ok, watch := collectionGet(r, coreV1, "pods")
	return ok && watch
}
