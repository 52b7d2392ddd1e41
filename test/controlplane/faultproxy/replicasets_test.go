package faultproxy_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// TestReplicaSetPaths: the ReplicaSet watches and lists are GETs of the
// apps/v1 collection, cluster-wide or in a namespace; nothing else is.
func TestReplicaSetPaths(t *testing.T) {
	for _, c := range []struct {
		method, target string
		watch, list    bool
	}{
		{"GET", "/apis/apps/v1/replicasets?watch=true", true, false},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets?watch=true&allowWatchBookmarks=true", true, false},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets?watch=1&shardSelector=x", true, false},
		{"GET", "/apis/apps/v1/watch/replicasets", true, false},
		{"GET", "/apis/apps/v1/watch/namespaces/ns/replicasets", true, false},
		{"GET", "/apis/apps/v1/replicasets", false, true},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets?limit=500&resourceVersion=0", false, true},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets?watch=false", false, true},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets/web", false, false},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets/web?watch=true", false, false},
		{"GET", "/apis/apps/v1/namespaces/ns/replicasets/web/status", false, false},
		{"GET", "/apis/apps/v1/namespaces//replicasets?watch=true", false, false},
		{"GET", "/apis/apps/v1/deployments?watch=true", false, false},
		{"GET", "/apis/apps/v1beta2/replicasets?watch=true", false, false},
		{"GET", "/apis/example.com/v1/replicasets?watch=true", false, false},
		{"GET", "/api/v1/replicasets?watch=true", false, false},
		{"GET", "/api/v1/pods?watch=true", false, false},
		{"GET", "/apis/apps/v1", false, false},
		{"GET", "/apis/apps/v1/watch", false, false},
		{"POST", "/apis/apps/v1/namespaces/ns/replicasets", false, false},
		{"PUT", "/apis/apps/v1/namespaces/ns/replicasets/web/status", false, false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		assert.Equal(t, c.watch, faultproxy.IsReplicaSetWatch(r), "watch: %s %s", c.method, c.target)
		assert.Equal(t, c.list, faultproxy.IsReplicaSetList(r), "list: %s %s", c.method, c.target)
	}
}

// TestReplicaSetBytes: the proxy counts the bytes of every ReplicaSet
// watch response, as they stream, and of every ReplicaSet list response,
// apart; pod watches, other watches and other requests add nothing to
// either, and the counted bodies reach the client unaltered.
func TestReplicaSetBytes(t *testing.T) {
	const (
		rsAll  = "/apis/apps/v1/replicasets"
		rsNS   = "/apis/apps/v1/namespaces/ns/replicasets"
		pods   = "/api/v1/namespaces/ns/pods"
		config = "/api/v1/namespaces/ns/configmaps"
	)
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			fu := newWatchUpstream(rsAll, rsNS, pods, config)
			up := newUpstream(t, fu)
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			c := newClient(t, up, proto.major)

			watches := map[string]*stream{}
			for _, path := range []string{rsAll, rsNS, pods, config} {
				watches[path] = openStream(t, c, p.URL()+path+"?watch=true", proto.major)
			}
			sent := map[string]int{}
			for i, path := range []string{rsAll, rsNS, pods, config, rsNS} {
				line := fmt.Sprintf(`{"type":"MODIFIED","object":{"kind":"ReplicaSet","n":%d,"pad":%q}}`, i, strings.Repeat("x", 100*i)) + "\n"
				fu.feeds[path] <- line
				assert.Equal(t, line, watches[path].next(t), "%s: unaltered", path)
				sent[path] += len(line)
			}
			assert.Equal(t, int64(sent[rsAll]+sent[rsNS]), p.Stats().ReplicaSetWatchBytes, "the two ReplicaSet watches' bytes, as they stream")

			lists := 0
			for _, target := range []string{rsAll, rsNS + "?limit=500&resourceVersion=0", rsNS + "?watch=false"} {
				resp, body := send(t, c, p.URL(), "GET", target, nil)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, payload("GET"+target, 3000), body, "%s: unaltered", target)
				lists += len(body)
			}
			for _, rq := range []struct{ method, target string }{
				{"GET", pods}, {"GET", rsNS + "/web"}, {"PUT", rsNS + "/web/status"}, {"POST", rsNS},
			} {
				send(t, c, p.URL(), rq.method, rq.target, nil)
			}

			st := p.Stats()
			assert.Equal(t, int64(lists), st.ReplicaSetListBytes, "the three lists' bytes, nothing else")
			assert.Equal(t, int64(sent[rsAll]+sent[rsNS]), st.ReplicaSetWatchBytes, "no other request adds to the watch bytes")
			assert.Equal(t, int64(sent[pods]), st.PodWatchBytesIn, "pod watches are counted as before, apart")
		})
	}
}

// TestReplicaSetInitialEvents: a ReplicaSet watch with
// sendInitialEvents=true counts as one with initial events, and its bytes
// up to the end of the bookmark annotation that ends them, even when the
// annotation arrives split across two reads, count as initial-event bytes;
// the events after it, and every byte of a watch without initial events,
// count as watch bytes only. Each line reaches the client unaltered.
func TestReplicaSetInitialEvents(t *testing.T) {
	const (
		rsAll = "/apis/apps/v1/replicasets"
		rsNS  = "/apis/apps/v1/namespaces/ns/replicasets"
	)
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			fu := newWatchUpstream(rsAll, rsNS)
			up := newUpstream(t, fu)
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			c := newClient(t, up, proto.major)

			listing := openStream(t, c, p.URL()+rsAll+"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", proto.major)
			resumed := openStream(t, c, p.URL()+rsNS+"?watch=true&resourceVersion=42&allowWatchBookmarks=true", proto.major)
			total := 0
			send := func(path, chunk string) {
				fu.feeds[path] <- chunk
				total += len(chunk)
				eventually(t, fmt.Sprintf("%d watch bytes", total), func() bool { return p.Stats().ReplicaSetWatchBytes == int64(total) })
			}

			initial := 0
			for i := range 3 {
				line := fmt.Sprintf(`{"type":"ADDED","object":{"kind":"ReplicaSet","n":%d}}`, i) + "\n"
				send(rsAll, line)
				assert.Equal(t, line, listing.next(t))
				initial += len(line)
			}
			// The bookmark, its annotation cut in two reads.
			bookmark := `{"type":"BOOKMARK","object":{"kind":"ReplicaSet","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
			cut := strings.Index(bookmark, "initial-events") + 4
			send(rsAll, bookmark[:cut])
			assert.Equal(t, int64(initial+cut), p.Stats().ReplicaSetInitialEventsBytes, "no marker yet: all of it")
			send(rsAll, bookmark[cut:])
			assert.Equal(t, bookmark, listing.next(t))
			initial += strings.Index(bookmark, "initial-events-end") + len("initial-events-end")

			for i, path := range []string{rsAll, rsNS, rsAll} {
				// The marker again, after the first, is an event's.
				line := fmt.Sprintf(`{"type":"MODIFIED","object":{"kind":"ReplicaSet","n":%d,"note":"k8s.io/initial-events-end"}}`, i) + "\n"
				send(path, line)
				s := listing
				if path == rsNS {
					s = resumed
				}
				assert.Equal(t, line, s.next(t))
			}

			st := p.Stats()
			assert.Equal(t, int64(total), st.ReplicaSetWatchBytes, "every byte of both watches")
			assert.Equal(t, int64(initial), st.ReplicaSetInitialEventsBytes, "up to the end of the first marker of the watch with initial events")
			assert.Equal(t, int64(2), st.ReplicaSetWatches)
			assert.Equal(t, int64(1), st.ReplicaSetWatchesWithInitialEvents)
			assert.Equal(t, int64(3), st.ReplicaSetWatchEvents, "the lines after the first marker, of both watches")
		})
	}
}

// TestReplicaSetWatchFrames: in a protobuf watch stream an event is a frame
// of a 4-byte big-endian length and that many bytes; the proxy counts each
// frame once, however the reads cut it (inside its length too), and, in a
// watch with initial events, the frames that start before the end of the
// marker that ends them apart from those after it. A gzip-encoded stream
// (one member per flush, as kube-apiserver sends a watch with initial
// events) is counted in its decoding. The bytes reach the client unaltered.
func TestReplicaSetWatchFrames(t *testing.T) {
	frame := func(payload string) string {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(payload)))
		return string(n[:]) + payload
	}
	gz := func(members ...string) string {
		var out bytes.Buffer
		for _, m := range members {
			w := gzip.NewWriter(&out)
			_, _ = io.WriteString(w, m)
			require.NoError(t, w.Close())
		}
		return out.String()
	}
	list := frame("ADDED rs-0") + frame("ADDED rs-1") + frame(`BOOKMARK {"k8s.io/initial-events-end":"true"}`)
	events := frame("MODIFIED rs-0") + frame("") + frame(strings.Repeat("x", 300)) + frame("DELETED rs-1")
	marker := strings.Index(list, "initial-events-end") + len("initial-events-end")
	compressed := gz(list, events[:7], events[7:])
	for _, c := range []struct {
		name, query     string
		stream          string
		gzip            bool
		cut             int // the reads are cut every cut bytes
		initial, events int
		initialBytes    int // -1: of a compressed stream, within (0, len]
	}{
		{"one read", "", events, false, 1 << 20, 0, 4, 0},
		{"byte by byte", "", events, false, 1, 0, 4, 0},
		{"three at a time", "", events, false, 3, 0, 4, 0},
		{"initial events, one read", "&sendInitialEvents=true", list + events, false, 1 << 20, 3, 4, marker},
		{"initial events, two at a time", "&sendInitialEvents=true", list + events, false, 2, 3, 4, marker},
		{"gzip, initial events, one read", "&sendInitialEvents=true", compressed, true, 1 << 20, 3, 4, -1},
		{"gzip, initial events, five at a time", "&sendInitialEvents=true", compressed, true, 5, 3, 4, -1},
		{"gzip, no initial events", "", gz(events), true, 7, 0, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			chunks := make(chan string)
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
				if c.gzip {
					w.Header().Set("Content-Encoding", "gzip")
				}
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				for chunk := range chunks {
					_, _ = io.WriteString(w, chunk)
					w.(http.Flusher).Flush()
				}
			}))
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			req, err := http.NewRequest(http.MethodGet, p.URL()+"/apis/apps/v1/replicasets?watch=true"+c.query, nil)
			require.NoError(t, err)
			req.Header.Set("Accept-Encoding", "gzip") // as client-go's transport sends it
			resp, err := newClient(t, up, 2).Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			sent := 0
			for i := 0; i < len(c.stream); i += c.cut {
				chunk := c.stream[i:min(i+c.cut, len(c.stream))]
				chunks <- chunk
				sent += len(chunk)
				// One read per chunk: the next is sent once the proxy has read this one.
				eventually(t, fmt.Sprintf("%d bytes", sent), func() bool { return p.Stats().ReplicaSetWatchBytes == int64(sent) })
			}
			close(chunks)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, c.stream, string(got), "unaltered")
			eventually(t, "the events counted", func() bool {
				st := p.Stats()
				return st.ReplicaSetWatchEvents+st.ReplicaSetInitialEvents == int64(c.events+c.initial)
			})
			st := p.Stats()
			assert.Equal(t, int64(c.events), st.ReplicaSetWatchEvents)
			assert.Equal(t, int64(c.initial), st.ReplicaSetInitialEvents)
			if c.initialBytes >= 0 {
				assert.Equal(t, int64(c.initialBytes), st.ReplicaSetInitialEventsBytes)
			} else {
				assert.Positive(t, st.ReplicaSetInitialEventsBytes)
				assert.LessOrEqual(t, st.ReplicaSetInitialEventsBytes, int64(len(c.stream)))
			}
			compressed := int64(0)
			if c.gzip {
				compressed = 1
			}
			assert.Equal(t, compressed, st.ReplicaSetWatchesCompressed)
		})
	}
}
