package faultproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// failsafe bounds every wait for something that must happen; it is never
// reached when the proxy works, and no assertion depends on it.
const failsafe = 20 * time.Second

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// protocols are the client's two ways to talk to the proxy.
var protocols = []struct {
	name  string
	major int
}{{"http2", 2}, {"http1", 1}}

// newUpstream starts a TLS server speaking HTTP/2 and HTTP/1.1, standing in
// for kube-apiserver.
func newUpstream(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// startProxy starts a proxy in front of up, serving up's own certificate
// (valid for 127.0.0.1), timed by clk.
func startProxy(t *testing.T, up *httptest.Server, clk *testingclock.FakeClock) *faultproxy.Proxy {
	t.Helper()
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	p, err := faultproxy.Start(faultproxy.Options{
		Upstream:    u,
		UpstreamTLS: &tls.Config{RootCAs: pool(up)},
		Certificate: up.TLS.Certificates[0],
		Clock:       clk,
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

func pool(up *httptest.Server) *x509.CertPool {
	cp := x509.NewCertPool()
	cp.AddCert(up.Certificate())
	return cp
}

// newClient is a client trusting up's certificate, speaking HTTP/2 or
// HTTP/1.1 only.
func newClient(t *testing.T, up *httptest.Server, major int) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(up)}, DisableCompression: true}
	if major == 2 {
		tr.ForceAttemptHTTP2 = true
	} else {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 2 * failsafe}
}

// eventually waits, within failsafe, until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(failsafe)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("failsafe: %s did not happen", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// streamHandler serves one watch stream per request: it sends the headers
// at once, as kube-apiserver does, then every line the test puts on lines,
// flushed; closing lines ends the stream.
func streamHandler(lines <-chan string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return
				}
				_, _ = io.WriteString(w, l)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
}

// received is one line the client read and the fake time it read it.
type received struct {
	line string
	at   time.Time
}

// watch opens path through the proxy and reads its lines in a goroutine
// (joined in cleanup); the channel closes at the stream's end.
func watch(t *testing.T, c *http.Client, p *faultproxy.Proxy, path string, clk *testingclock.FakeClock, major int) <-chan received {
	t.Helper()
	resp, err := c.Get(p.URL() + path)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, major, resp.ProtoMajor)
	got := make(chan received, 100)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(got)
		r := bufio.NewReader(resp.Body)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			got <- received{l, clk.Now()}
		}
	})
	t.Cleanup(func() { resp.Body.Close(); wg.Wait() })
	return got
}

func next(t *testing.T, got <-chan received) received {
	t.Helper()
	select {
	case r, ok := <-got:
		require.True(t, ok, "the stream ended")
		return r
	case <-time.After(failsafe):
		t.Fatal("failsafe: no line arrived")
		return received{}
	}
}

// none checks that nothing has arrived. The fake clock has not reached the
// next release time, so nothing can be on its way: no timing involved.
func none(t *testing.T, got <-chan received) {
	t.Helper()
	select {
	case r, ok := <-got:
		if ok {
			t.Fatalf("%q arrived at %v, before its time", r.line, r.at.Sub(t0))
		}
		t.Fatal("the stream ended early")
	default:
	}
}

// waitIn waits until the proxy has received n bytes of pod watches (and so
// stamped their arrival).
func waitIn(t *testing.T, p *faultproxy.Proxy, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d pod watch bytes in", n), func() bool { return p.Stats().PodWatchBytesIn == int64(n) })
}

// TestPodWatchDelay: each line of a pod watch reaches the client exactly the
// delay after it reached the proxy, in order; a changed delay re-times what
// is buffered; the stream's end follows its last line.
func TestPodWatchDelay(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			lines := make(chan string)
			up := newUpstream(t, streamHandler(lines))
			clk := testingclock.NewFakeClock(t0)
			p := startProxy(t, up, clk)
			p.SetPodWatchDelay(30 * time.Second)
			require.Equal(t, 30*time.Second, p.PodWatchDelay())
			// The headers are not delayed: watch returns once they are in.
			got := watch(t, newClient(t, up, proto.major), p, "/api/v1/namespaces/ns/pods?watch=true&allowWatchBookmarks=true", clk, proto.major)
			in := 0
			send := func(l string) {
				lines <- l
				in += len(l)
				waitIn(t, p, in)
			}

			send("A\n") // arrives at +0s
			none(t, got)
			clk.Step(29 * time.Second)
			none(t, got)
			clk.Step(time.Second)
			assert.Equal(t, received{"A\n", t0.Add(30 * time.Second)}, next(t, got))

			send("B\n") // +30s
			clk.Step(10 * time.Second)
			bookmark := `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"42"}}}` + "\n"
			send(bookmark) // +40s
			p.SetPodWatchDelay(15 * time.Second)
			none(t, got) // B is due at +45s now
			clk.Step(5 * time.Second)
			assert.Equal(t, received{"B\n", t0.Add(45 * time.Second)}, next(t, got))
			none(t, got) // the bookmark is due at +55s
			p.SetPodWatchDelay(0)
			assert.Equal(t, received{bookmark, t0.Add(45 * time.Second)}, next(t, got), "delay 0 releases what is buffered at once")

			big := strings.Repeat("x", 100<<10) + "\n" // more than one read of the proxy's
			send(big)
			assert.Equal(t, received{big, t0.Add(45 * time.Second)}, next(t, got))

			p.SetPodWatchDelay(20 * time.Second)
			send("D\n") // +45s
			close(lines)
			none(t, got)
			clk.Step(20 * time.Second)
			assert.Equal(t, received{"D\n", t0.Add(65 * time.Second)}, next(t, got))
			_, open := <-got
			assert.False(t, open, "the stream ends after its last line")

			st := p.Stats()
			assert.Equal(t, int64(1), st.PodWatches)
			assert.Equal(t, st.PodWatchBytesIn, st.PodWatchBytesOut)
		})
	}
}

// TestPodWatchPaths: the delay applies to pod watches, cluster-wide and per
// namespace, and to nothing else.
func TestPodWatchPaths(t *testing.T) {
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"GET", "/api/v1/pods?watch=true", true},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5", true},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1", true},
		{"GET", "/api/v1/pods?labelSelector=a%3Db&watch=true&sendInitialEvents=true", true},
		{"GET", "/api/v1/watch/pods", true},
		{"GET", "/api/v1/watch/namespaces/ns/pods", true},
		{"GET", "/api/v1/pods", false},
		{"GET", "/api/v1/namespaces/ns/pods?watch=false", false},
		{"GET", "/api/v1/namespaces/ns/pods/web-1?watch=true", false},
		{"GET", "/api/v1/namespaces/ns/pods/web-1/log?follow=true&watch=true", false},
		{"GET", "/api/v1/namespaces//pods?watch=true", false},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true", false},
		{"GET", "/api/v1/podtemplates?watch=true", false},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets?watch=true", false},
		{"GET", "/apis/example.com/v1/pods?watch=true", false},
		{"GET", "/api/v2/pods?watch=true", false},
		{"POST", "/api/v1/namespaces/ns/pods?watch=true", false},
		{"GET", "/", false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		assert.Equal(t, c.want, faultproxy.IsPodWatch(r), "%s %s", c.method, c.target)
	}
}

// seen is a request as the upstream received it.
type seen struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// TestPassThrough: with a pod watch delay of an hour, the clock never
// moving and pod watches held, lists, other watches and writes come
// through at once, their
// bodies byte for byte and their headers unchanged, both ways; the
// response headers are those of a direct request to the upstream.
func TestPassThrough(t *testing.T) {
	var mu sync.Mutex
	var last seen
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body}
		mu.Unlock()
		h := w.Header()
		h.Set("Content-Type", "application/vnd.kubernetes.protobuf")
		h.Set("Audit-Id", "a1b2")
		h.Add("X-Multi", "one")
		h.Add("X-Multi", "two")
		resp := payload(r.Method+r.URL.String(), 70<<10)
		if r.URL.Query().Get("watch") != "" {
			// A stream: three flushed parts, then the end.
			w.WriteHeader(http.StatusOK)
			for i := range 3 {
				_, _ = w.Write(resp[i*1000 : (i+1)*1000])
				w.(http.Flusher).Flush()
			}
			return
		}
		h.Set("Content-Length", fmt.Sprint(len(resp)))
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = w.Write(resp)
	}))
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			p.SetPodWatchDelay(time.Hour)
			p.HoldPodWatches(true)
			p.CutPodWatches()
			c := newClient(t, up, proto.major)
			for _, rq := range []struct{ method, target string }{
				{"GET", "/api/v1/namespaces/ns/pods"},
				{"GET", "/api/v1/pods?limit=500&resourceVersion=0"},
				{"GET", "/api/v1/namespaces/ns/pods?watch=false"},
				{"GET", "/api/v1/namespaces/ns/pods/web-1"},
				{"GET", "/api/v1/namespaces/ns/configmaps?watch=true"},
				{"GET", "/apis/apps/v1/namespaces/ns/replicasets?watch=true&allowWatchBookmarks=true"},
				{"POST", "/api/v1/namespaces/ns/pods"},
				{"PUT", "/apis/apps/v1/namespaces/ns/replicasets/web/status"},
				{"PATCH", "/api/v1/namespaces/ns/pods/web-1"},
				{"DELETE", "/api/v1/namespaces/ns/pods/web-1"},
			} {
				reqBody := payload("request "+rq.target, 5000)
				do := func(base string) (*http.Response, []byte, seen) {
					req, err := http.NewRequest(rq.method, base+rq.target, bytes.NewReader(reqBody))
					require.NoError(t, err)
					req.Header.Set("Authorization", "Bearer token")
					req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
					req.Header.Set("Content-Type", "application/apply-patch+yaml")
					req.Header.Set("User-Agent", "rscontroller/v0.0.0")
					req.Header.Set("Accept-Encoding", "gzip")
					req.Header.Set("X-Forwarded-For", "10.0.0.7")
					resp, err := c.Do(req)
					require.NoError(t, err)
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					require.NoError(t, err)
					mu.Lock()
					defer mu.Unlock()
					return resp, b, last
				}
				direct, directBody, _ := do(up.URL)
				proxied, proxiedBody, got := do(p.URL())
				name := rq.method + " " + rq.target
				assert.Equal(t, proto.major, proxied.ProtoMajor, name)
				assert.Equal(t, direct.StatusCode, proxied.StatusCode, name)
				assert.Equal(t, directBody, proxiedBody, name)
				assert.Equal(t, payload(rq.method+rq.target, 70<<10)[:len(proxiedBody)], proxiedBody, name)
				direct.Header.Del("Date")
				proxied.Header.Del("Date")
				assert.Equal(t, direct.Header, proxied.Header, name)

				u, err := url.Parse(rq.target)
				require.NoError(t, err)
				assert.Equal(t, rq.method, got.method, name)
				assert.Equal(t, u.Path, got.path, name)
				assert.Equal(t, u.RawQuery, got.query, name)
				assert.Equal(t, reqBody, got.body, name)
				for _, h := range []string{"Authorization", "Accept", "Content-Type", "User-Agent", "Accept-Encoding", "X-Forwarded-For"} {
					assert.Equal(t, []string{directHeader(h)}, got.header[h], "%s: request header %s", name, h)
				}
			}
			st := p.Stats()
			assert.Equal(t, int64(10), st.Requests)
			assert.Zero(t, st.PodWatches)
			assert.Zero(t, st.PodWatchesHeld)
		})
	}
}

func directHeader(h string) string {
	return map[string]string{
		"Authorization": "Bearer token", "Accept": "application/vnd.kubernetes.protobuf, application/json",
		"Content-Type": "application/apply-patch+yaml", "User-Agent": "rscontroller/v0.0.0",
		"Accept-Encoding": "gzip", "X-Forwarded-For": "10.0.0.7",
	}[h]
}

// payload is n deterministic pseudo-random bytes seeded by s.
func payload(s string, n int) []byte {
	var seed uint64
	for _, c := range []byte(s) {
		seed = seed*31 + uint64(c)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestClose: Close ends a delayed pod watch with bytes still held back and
// an open pass-through watch, returns, and leaves no goroutine behind.
func TestClose(t *testing.T) {
	lines, never := make(chan string), make(chan string)
	defer close(lines)
	pods, others := streamHandler(lines), streamHandler(never)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if faultproxy.IsPodWatch(r) {
			pods(w, r)
		} else {
			others(w, r)
		}
	}))
	baseline := runtime.NumGoroutine()
	clk := testingclock.NewFakeClock(t0)
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	p, err := faultproxy.Start(faultproxy.Options{Upstream: u, UpstreamTLS: &tls.Config{RootCAs: pool(up)},
		Certificate: up.TLS.Certificates[0], Clock: clk})
	require.NoError(t, err)
	p.SetPodWatchDelay(time.Hour)
	var bodies []io.ReadCloser
	for _, proto := range protocols {
		c := newClient(t, up, proto.major)
		for _, path := range []string{"/api/v1/pods?watch=true", "/api/v1/configmaps?watch=true"} {
			resp, err := c.Get(p.URL() + path)
			require.NoError(t, err)
			bodies = append(bodies, resp.Body)
		}
	}
	lines <- "held\n" // to one of the two pod watches
	waitIn(t, p, len("held\n"))
	require.Equal(t, int64(2), p.Stats().PodWatches)

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(failsafe):
		t.Fatal("failsafe: Close did not return")
	}
	for _, b := range bodies {
		_, err := io.ReadAll(b)
		assert.Error(t, err, "a stream cut by Close ends with an error")
		b.Close()
	}
	assert.Zero(t, p.Stats().PodWatchBytesOut, "held bytes are dropped")
	require.NoError(t, p.Close(), "Close is idempotent")

	assertProxyGoroutinesGone(t, baseline)
}

// TestCloseWithFaults: after every fault has struck, with pod watches held,
// writes failing and a pod watch open with bytes held back, Close returns
// and leaves no goroutine behind.
func TestCloseWithFaults(t *testing.T) {
	const pods = "/api/v1/namespaces/ns/pods"
	fu := newWatchUpstream(pods)
	up := newUpstream(t, fu)
	baseline := runtime.NumGoroutine()
	clk := testingclock.NewFakeClock(t0)
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	p, err := faultproxy.Start(faultproxy.Options{Upstream: u, UpstreamTLS: &tls.Config{RootCAs: pool(up)},
		Certificate: up.TLS.Certificates[0], Clock: clk})
	require.NoError(t, err)
	clients := map[int]*http.Client{}
	for _, proto := range protocols {
		c := newClient(t, up, proto.major)
		clients[proto.major] = c
		cut := openStream(t, c, p.URL()+pods+"?watch=true", proto.major)
		p.HoldPodWatches(true)
		p.CutPodWatches()
		require.Equal(t, io.EOF, cut.end(t))
		resp, _ := send(t, c, p.URL(), "GET", pods+"?watch=true", nil)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		p.DropPodCreateResponses(1)
		resp, _ = send(t, c, p.URL(), "POST", pods, nil)
		require.Equal(t, http.StatusGatewayTimeout, resp.StatusCode)
		p.HoldPodWatches(false)
		require.NoError(t, p.FailWrites(1, 500))
		resp, _ = send(t, c, p.URL(), "PUT", pods+"/web-1", nil)
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		require.NoError(t, p.FailWrites(0, 0))
	}
	var open []*stream
	for _, proto := range protocols {
		open = append(open, openStream(t, clients[proto.major], p.URL()+pods+"?watch=true", proto.major))
	}
	p.SetPodWatchDelay(time.Hour)
	p.HoldPodWatches(true)
	require.NoError(t, p.FailWrites(1, 429))
	fu.feeds[pods] <- "held\n" // to one of the two open watches
	waitIn(t, p, len("held\n"))

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(failsafe):
		t.Fatal("failsafe: Close did not return")
	}
	for _, s := range open {
		err := s.end(t)
		assert.Error(t, err)
		assert.NotEqual(t, io.EOF, err, "Close cuts with an error, not a clean end")
	}
	st := p.Stats()
	assert.Equal(t, []int64{2, 2, 2, 2}, []int64{st.PodWatchesCut, st.PodWatchesHeld, st.PodCreateResponsesDropped, st.WritesFailed})

	assertProxyGoroutinesGone(t, baseline)
}

// assertProxyGoroutinesGone checks, right after Close returned, that no
// goroutine runs the proxy's code, except a handler net/http aborted
// (httputil.ReverseProxy panics with http.ErrAbortHandler when a client
// goes away mid-stream): Close waited for it, but it may still be unwinding
// through net/http's own recovery. Then it waits, bounded, for every
// goroutine started since baseline to end, those included.
func assertProxyGoroutinesGone(t *testing.T, baseline int) {
	t.Helper()
	for _, g := range strings.Split(stacks(), "\n\n") {
		if strings.Contains(g, "controlplane/faultproxy.") && !strings.Contains(g, "panic(") {
			t.Errorf("a goroutine runs the proxy's code after Close:\n%s", g)
		}
	}
	deadline := time.Now().Add(failsafe)
	for runtime.NumGoroutine() > baseline+1 { // +1: the Close goroutine, if not yet gone
		if time.Now().After(deadline) {
			t.Fatalf("failsafe: %d goroutines, %d before the proxy started:\n%s", runtime.NumGoroutine(), baseline, stacks())
		}
		time.Sleep(time.Millisecond)
	}
	assert.NotContains(t, stacks(), "controlplane/faultproxy.")
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// TestStartErrors: bad options are errors, not panics.
func TestStartErrors(t *testing.T) {
	up := newUpstream(t, http.NotFoundHandler())
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	for name, opts := range map[string]faultproxy.Options{
		"no upstream":    {Certificate: up.TLS.Certificates[0]},
		"relative":       {Upstream: &url.URL{Path: "/x"}, Certificate: up.TLS.Certificates[0]},
		"no certificate": {Upstream: u},
	} {
		_, err := faultproxy.Start(opts)
		assert.ErrorContains(t, err, "faultproxy: ", name)
	}
}

// TestUpstreamDown: an unreachable API server is a 502 for the client, as
// from any proxy, and the proxy keeps serving.
func TestUpstreamDown(t *testing.T) {
	up := newUpstream(t, http.NotFoundHandler())
	p := startProxy(t, up, testingclock.NewFakeClock(t0))
	c := newClient(t, up, 2)
	up.Close()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	for range 2 {
		req, err := http.NewRequestWithContext(ctx, "GET", p.URL()+"/api/v1/pods?watch=true", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	}
}

// recorder is a fake kube-apiserver for requests other than watches: it
// records each and answers with a body derived from it, 201 for a POST and
// 200 otherwise, except in namespace "refused", where it answers 403.
type recorder struct {
	mu   sync.Mutex
	seen []seen
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.seen = append(rec.seen, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
	rec.mu.Unlock()
	resp := payload(r.Method+r.URL.String(), 3000)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Audit-Id", "a1b2")
	h.Set("Content-Length", fmt.Sprint(len(resp)))
	switch {
	case strings.Contains(r.URL.Path, "/namespaces/refused/"):
		w.WriteHeader(http.StatusForbidden)
	case r.Method == http.MethodPost:
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = w.Write(resp)
}

// all is a copy of what rec has received, oldest first.
func (rec *recorder) all() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.seen...)
}

// send makes a request with body to base+target and reads the response.
func send(t *testing.T, c *http.Client, base, method, target string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+target, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// passesThrough sends the same request to the upstream directly and
// through p, and checks that p altered nothing: rec got the same request
// twice, and the client the same response.
func passesThrough(t *testing.T, c *http.Client, up *httptest.Server, p *faultproxy.Proxy, rec *recorder, method, target string) {
	t.Helper()
	name := method + " " + target
	body := payload("request "+name, 3000)
	before := len(rec.all())
	direct, directBody := send(t, c, up.URL, method, target, body)
	proxied, proxiedBody := send(t, c, p.URL(), method, target, body)
	assert.Equal(t, direct.StatusCode, proxied.StatusCode, name)
	assert.Equal(t, directBody, proxiedBody, name)
	direct.Header.Del("Date")
	proxied.Header.Del("Date")
	assert.Equal(t, direct.Header, proxied.Header, name)
	got := rec.all()[before:]
	require.Len(t, got, 2, "%s: the upstream got both", name)
	for _, g := range got {
		u, err := url.Parse(target)
		require.NoError(t, err)
		assert.Equal(t, []any{method, u.Path, u.RawQuery, body, "Bearer token"},
			[]any{g.method, g.path, g.query, g.body, g.header.Get("Authorization")}, name)
	}
}

// isStatus checks that resp, with body b, is a Kubernetes Status of the
// proxy's with code and reason (and, for a 429, Retry-After: 1).
func isStatus(t *testing.T, resp *http.Response, b []byte, code int, reason metav1.StatusReason) {
	t.Helper()
	require.Equal(t, code, resp.StatusCode, "body: %s", b)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var st metav1.Status
	require.NoError(t, json.Unmarshal(b, &st))
	assert.Equal(t, "Status", st.Kind)
	assert.Equal(t, "v1", st.APIVersion)
	assert.Equal(t, metav1.StatusFailure, st.Status)
	assert.Equal(t, reason, st.Reason)
	assert.Equal(t, int32(code), st.Code)
	assert.Contains(t, st.Message, "faultproxy: ")
	if code == http.StatusTooManyRequests {
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		require.NotNil(t, st.Details)
		assert.Equal(t, int32(1), st.Details.RetryAfterSeconds)
	} else {
		assert.Empty(t, resp.Header.Values("Retry-After"))
	}
}
