package faultproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// watchUpstream is a fake kube-apiserver: a watch streams what the test
// sends on feeds[its path] and stays open until the client goes; every
// other request goes to rec.
type watchUpstream struct {
	feeds map[string]chan string
	rec   recorder

	mu     sync.Mutex
	open   map[string]int // the watches being served, by path
	opened map[string]int // every watch received, by path
}

func newWatchUpstream(paths ...string) *watchUpstream {
	u := &watchUpstream{feeds: map[string]chan string{}, open: map[string]int{}, opened: map[string]int{}}
	for _, p := range paths {
		u.feeds[p] = make(chan string)
	}
	return u
}

func (u *watchUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("watch")
	if q != "true" && q != "1" && !strings.HasPrefix(r.URL.Path, "/api/v1/watch/") {
		u.rec.ServeHTTP(w, r)
		return
	}
	path := r.URL.Path
	u.mu.Lock()
	u.open[path]++
	u.opened[path]++
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.open[path]--
		u.mu.Unlock()
	}()
	streamHandler(u.feeds[path])(w, r)
}

// count is open[path] or opened[path].
func (u *watchUpstream) count(m map[string]int, path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return m[path]
}

// stream is a response read line by line in a goroutine (joined in
// cleanup); lines closes at its end, after err is set to how it ended
// (io.EOF: cleanly).
type stream struct {
	lines chan string
	err   error
}

func openStream(t *testing.T, c *http.Client, url string, major int) *stream {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, major, resp.ProtoMajor)
	s := &stream{lines: make(chan string, 100)}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(s.lines)
		r := bufio.NewReader(resp.Body)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				if l != "" {
					err = fmt.Errorf("after the partial line %q: %w", l, err)
				}
				s.err = err
				return
			}
			s.lines <- l
		}
	})
	t.Cleanup(func() { resp.Body.Close(); wg.Wait() })
	return s
}

func (s *stream) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		require.True(t, ok, "the stream ended: %v", s.err)
		return l
	case <-time.After(failsafe):
		t.Fatal("failsafe: no line arrived")
		return ""
	}
}

// end waits for the stream's end, which no line precedes, and returns how
// it ended.
func (s *stream) end(t *testing.T) error {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if ok {
			t.Fatalf("%q arrived; the end was due", l)
		}
		return s.err
	case <-time.After(failsafe):
		t.Fatal("failsafe: the stream did not end")
		return nil
	}
}

// TestCutPodWatches: a cut ends every open pod watch at once and cleanly,
// dropping what the delay holds back, and ends the proxy's request to the
// API server; other watches go on; without a hold, the client reconnects
// and its new watch is not cut until the next cut.
func TestCutPodWatches(t *testing.T) {
	const all, ns, cms = "/api/v1/pods", "/api/v1/namespaces/ns/pods", "/api/v1/namespaces/ns/configmaps"
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			fu := newWatchUpstream(all, ns, cms)
			up := newUpstream(t, fu)
			clk := testingclock.NewFakeClock(t0)
			p := startProxy(t, up, clk)
			c := newClient(t, up, proto.major)
			allW := openStream(t, c, p.URL()+all+"?watch=true&allowWatchBookmarks=true", proto.major)
			nsW := openStream(t, c, p.URL()+ns+"?watch=1&resourceVersion=5", proto.major)
			cmW := openStream(t, c, p.URL()+cms+"?watch=true", proto.major)
			for path, s := range map[string]*stream{all: allW, ns: nsW, cms: cmW} {
				fu.feeds[path] <- "first " + path + "\n"
				assert.Equal(t, "first "+path+"\n", s.next(t))
			}
			in := len("first "+all+"\n") + len("first "+ns+"\n")
			p.SetPodWatchDelay(time.Hour)
			fu.feeds[ns] <- "held\n"
			waitIn(t, p, in+len("held\n"))

			p.CutPodWatches()
			assert.Equal(t, io.EOF, allW.end(t), "a clean end")
			assert.Equal(t, io.EOF, nsW.end(t), "a clean end, without the held line")
			eventually(t, "the API server sees both watches end", func() bool {
				return fu.count(fu.open, all) == 0 && fu.count(fu.open, ns) == 0
			})
			st := p.Stats()
			assert.Equal(t, int64(2), st.PodWatchesCut)
			assert.Equal(t, int64(2), st.PodWatches)
			assert.Equal(t, int64(in), st.PodWatchBytesOut)

			fu.feeds[cms] <- "second\n"
			assert.Equal(t, "second\n", cmW.next(t), "other watches go on")
			passesThrough(t, c, up, p, &fu.rec, "GET", all)

			p.SetPodWatchDelay(0)
			again := openStream(t, c, p.URL()+all+"?watch=true&resourceVersion=7", proto.major)
			fu.feeds[all] <- "again\n"
			assert.Equal(t, "again\n", again.next(t), "a watch made after the cut is not cut")
			assert.Equal(t, int64(2), p.Stats().PodWatchesCut)

			p.CutPodWatches()
			assert.Equal(t, io.EOF, again.end(t))
			assert.Equal(t, int64(3), p.Stats().PodWatchesCut)
			fu.feeds[cms] <- "third\n"
			assert.Equal(t, "third\n", cmW.next(t))
			assert.Equal(t, 2, fu.count(fu.opened, all))
			assert.Zero(t, p.Stats().PodWatchesHeld)
		})
	}
}

// TestHoldPodWatches: while held, every pod watch request, watch-list
// included, is answered 429 without reaching the API server; open pod
// watches, lists, other watches and writes pass; the release lets pod
// watches through again.
func TestHoldPodWatches(t *testing.T) {
	const all, pods, cms = "/api/v1/pods", "/api/v1/namespaces/ns/pods", "/api/v1/namespaces/ns/configmaps"
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			fu := newWatchUpstream(all, pods, cms)
			up := newUpstream(t, fu)
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			c := newClient(t, up, proto.major)
			before := openStream(t, c, p.URL()+pods+"?watch=true", proto.major)

			p.HoldPodWatches(true)
			held := []string{
				all + "?watch=true",
				pods + "?watch=1&resourceVersion=7&allowWatchBookmarks=true",
				pods + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
				"/api/v1/watch/pods",
				"/api/v1/watch/namespaces/ns/pods",
			}
			for i, target := range held {
				resp, b := send(t, c, p.URL(), "GET", target, nil)
				isStatus(t, resp, b, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
				assert.Equal(t, int64(i+1), p.Stats().PodWatchesHeld, target)
			}
			for _, path := range []string{all, pods, "/api/v1/watch/pods", "/api/v1/watch/namespaces/ns/pods"} {
				want := 0
				if path == pods {
					want = 1 // before the hold
				}
				assert.Equal(t, want, fu.count(fu.opened, path), "%s reached the API server", path)
			}

			fu.feeds[pods] <- "open\n"
			assert.Equal(t, "open\n", before.next(t), "a watch open before the hold goes on")
			cmW := openStream(t, c, p.URL()+cms+"?watch=true", proto.major)
			fu.feeds[cms] <- "cm\n"
			assert.Equal(t, "cm\n", cmW.next(t))
			passesThrough(t, c, up, p, &fu.rec, "GET", all)
			passesThrough(t, c, up, p, &fu.rec, "GET", pods+"?watch=false&limit=500")
			passesThrough(t, c, up, p, &fu.rec, "GET", pods+"/web-1")
			passesThrough(t, c, up, p, &fu.rec, "POST", pods)
			passesThrough(t, c, up, p, &fu.rec, "DELETE", pods+"/web-1")

			p.HoldPodWatches(false)
			after := openStream(t, c, p.URL()+all+"?watch=true", proto.major)
			fu.feeds[all] <- "after\n"
			assert.Equal(t, "after\n", after.next(t))
			st := p.Stats()
			assert.Equal(t, int64(len(held)), st.PodWatchesHeld)
			assert.Equal(t, int64(2), st.PodWatches)
			assert.Zero(t, st.PodWatchesCut)
		})
	}
}
