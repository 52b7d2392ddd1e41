package faultproxy

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
)

// The API group versions whose collections the proxy recognises.
var (
	coreV1 = []string{"api", "v1"}
	appsV1 = []string{"apis", "apps", "v1"}
)

// collectionGet reports whether r is a GET of resource's collection in the
// group version at prefix (coreV1, appsV1), cluster-wide or in one
// namespace, and whether it is a watch: watch=true (or 1), or any request
// under the deprecated watch/ path prefix. A named object (…/resource/name)
// or its subresource is not a collection.
func collectionGet(r *http.Request, prefix []string, resource string) (ok, watch bool) {
	if r.Method != http.MethodGet {
		return false, false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) <= len(prefix) || !slices.Equal(parts[:len(prefix)], prefix) {
		return false, false
	}
	parts = parts[len(prefix):]
	watchPrefix := parts[0] == "watch"
	if watchPrefix {
		parts = parts[1:]
	}
	ok = (len(parts) == 1 && parts[0] == resource) ||
		(len(parts) == 3 && parts[0] == "namespaces" && parts[1] != "" && parts[2] == resource)
	if !ok {
		return false, false
	}
	switch r.URL.Query().Get("watch") {
	case "true", "1":
		return true, true
	}
	return true, watchPrefix
}

// IsReplicaSetWatch reports whether r is a ReplicaSet watch: a GET of
// apps/v1 replicasets, cluster-wide or in one namespace, with watch=true
// (or 1), or the same under the deprecated /apis/apps/v1/watch/ prefix. A
// watch of one named ReplicaSet is not one. The proxy counts these
// responses' bytes ([Stats].ReplicaSetWatchBytes): a sharded controller's
// owner watches, each of which kube-apiserver may narrow to a shard.
func IsReplicaSetWatch(r *http.Request) bool {
	ok, watch := collectionGet(r, appsV1, "replicasets")
	return ok && watch
}

// IsReplicaSetList reports whether r is a ReplicaSet list: a GET of apps/v1
// replicasets, cluster-wide or in one namespace, that is not a watch
// ([IsReplicaSetWatch]). The proxy counts these responses' bytes
// ([Stats].ReplicaSetListBytes).
func IsReplicaSetList(r *http.Request) bool {
	ok, watch := collectionGet(r, appsV1, "replicasets")
	return ok && !watch
}

// countedBody is a response body that adds every byte read from it to n.
// It alters nothing: the reverse proxy reads and flushes it as it would
// the body it wraps.
type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// withInitialEvents reports whether the watch r asks for its initial
// events (sendInitialEvents=true): a streaming list, which client-go's
// informers make when WatchListClient is on (the default since v0.35).
func withInitialEvents(r *http.Request) bool {
	return r.URL.Query().Get("sendInitialEvents") == "true"
}

// initialEventsEnd is the annotation of the bookmark that ends a watch's
// initial events. Its bytes appear as they are in a JSON and in a
// protobuf watch stream.
var initialEventsEnd = []byte("k8s.io/initial-events-end")

// watchBody is the body of a ReplicaSet watch. It adds every byte read
// to total and every event (frame) whose start it reads to events, and
// alters nothing. With initial events (initial not nil) it also adds the
// bytes up to the end of the first initialEventsEnd it reads (which may be
// split across reads) to initial, and counts only the frames that start
// after that end as events. Reads come from the one goroutine copying the
// response.
type watchBody struct {
	io.ReadCloser
	total, initial, events *atomic.Int64
	frames                 frameCounter
	// ended: the marker has been read (or there is none to read); tail:
	// the last bytes read before it, fewer than the marker's, in case it
	// began in them.
	ended bool
	tail  []byte
}

// newWatchBody returns a watchBody for a response of contentType; initial
// nil: a watch without initial events.
func newWatchBody(body io.ReadCloser, contentType string, total, initial, events *atomic.Int64) *watchBody {
	return &watchBody{ReadCloser: body, total: total, initial: initial, events: events,
		frames: frameCounter{protobuf: strings.HasPrefix(contentType, "application/vnd.kubernetes.protobuf")},
		ended:  initial == nil}
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.total.Add(int64(n))
	read := p[:n]
	if !b.ended && n > 0 {
		seen := append(b.tail, read...)
		i := bytes.Index(seen, initialEventsEnd)
		if i < 0 {
			b.initial.Add(int64(n))
			b.frames.feed(read) // the list's frames
			keep := min(len(seen), len(initialEventsEnd)-1)
			b.tail = append(b.tail[:0:0], seen[len(seen)-keep:]...)
			return n, err
		}
		// The marker ends in read (the tail is shorter than it).
		end := i + len(initialEventsEnd) - len(b.tail)
		b.initial.Add(int64(end))
		b.frames.feed(read[:end])
		b.ended, b.tail, read = true, nil, read[end:]
		b.frames.skipLine = !b.frames.protobuf // the rest of the bookmark's line
	}
	b.events.Add(b.frames.feed(read))
	return n, err
}

// frameCounter finds the starts of a watch stream's events as its bytes
// come: a protobuf stream is frames of a 4-byte big-endian length and that
// many bytes, a JSON stream one event per line.
type frameCounter struct {
	protobuf bool
	skipLine bool // JSON: the next line's end is not an event's
	header   [4]byte
	have     int    // bytes of the next frame's length read
	left     uint32 // bytes of the current frame still to come
}

// feed reads p and returns how many events start in it (for protobuf, a
// frame starts when its length has been read whole; for JSON, an event
// when its line ends).
func (f *frameCounter) feed(p []byte) int64 {
	if !f.protobuf {
		n := int64(bytes.Count(p, []byte{'\n'}))
		if f.skipLine && n > 0 {
			f.skipLine = false
			n--
		}
		return n
	}
	var n int64
	for len(p) > 0 {
		if f.left > 0 {
			k := min(uint32(len(p)), f.left)
			f.left -= k
			p = p[k:]
			continue
		}
		f.header[f.have] = p[0]
		f.have++
		p = p[1:]
		if f.have == len(f.header) {
			f.left = binary.BigEndian.Uint32(f.header[:])
			f.have = 0
			n++
		}
	}
	return n
}
