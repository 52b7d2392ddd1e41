package faultproxy

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// withInitialEvents reports whether the watch r asks for its initial
// events (sendInitialEvents=true): a streaming list, which client-go's
// informers make when WatchListClient is on (the default since v0.35).
func withInitialEvents(r *http.Request) bool {
	return r.URL.Query().Get("sendInitialEvents") == "true"
}

// initialEventsEnd is the annotation of the bookmark that ends a watch's
// initial events. Its bytes appear as they are in a JSON and in a
// protobuf watch stream (not in a compressed one: watchBody decodes that).
var initialEventsEnd = []byte("k8s.io/initial-events-end")

// watchCounts are the counters a ReplicaSet watch adds to: its bytes as
// received, those up to the end of its initial events, and its events
// before and after that end.
type watchCounts struct {
	bytes, initialBytes, initialEvents, events *atomic.Int64
}

// watchBody is the body of a ReplicaSet watch, which it counts into c and
// does not alter. Every byte read counts in c.bytes. The stream's events
// are counted as they start (streamScanner), in the stream itself or, for
// a gzip-encoded one (kube-apiserver compresses a watch with initial
// events when the client accepts gzip: WatchListCompression, beta and on
// since v1.37), in its decoding, which a goroutine of the body's own does
// from a pipe; the bytes a client reads wait for the decoder to have taken
// them, not to have decoded them.
type watchBody struct {
	io.ReadCloser
	c    watchCounts
	scan *streamScanner
	// gzip: the decoder's input, the bytes read so far, and closed when
	// the decoder has returned.
	pw      *io.PipeWriter
	wire    atomic.Int64
	decoded chan struct{}
}

// newWatchBody returns the body of resp, a ReplicaSet watch of a request
// with initial events or not.
func newWatchBody(resp *http.Response, initial bool, c watchCounts) *watchBody {
	b := &watchBody{ReadCloser: resp.Body, c: c, scan: &streamScanner{
		initial: initial, ended: !initial, c: c,
		frames: frameCounter{protobuf: strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf")},
	}}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		pr, pw := io.Pipe()
		b.pw, b.decoded = pw, make(chan struct{})
		go b.decode(pr)
	}
	return b
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.bytes.Add(int64(n))
	if b.pw != nil {
		if n > 0 {
			b.wire.Add(int64(n))
			_, _ = b.pw.Write(p[:n]) // the decoder drains the pipe until it is closed
		}
		return n, err
	}
	wasInitial := !b.scan.ended
	end, found := b.scan.scan(p[:n])
	switch {
	case wasInitial && found:
		b.c.initialBytes.Add(int64(end))
	case wasInitial:
		b.c.initialBytes.Add(int64(n))
	}
	return n, err
}

// Close closes the body and, for a gzip-encoded one, waits for its
// decoder.
func (b *watchBody) Close() error {
	err := b.ReadCloser.Close()
	if b.pw != nil {
		b.pw.Close()
		<-b.decoded
	}
	return err
}

// decode reads the gzip stream from pr (its members one after another, one
// per flush of kube-apiserver) and scans what it decodes. The bytes up to
// the end of the initial events are those read when it decoded the marker
// (to within one read), or every byte when it never did. It drains pr
// until the body closes it, also after an error.
func (b *watchBody) decode(pr *io.PipeReader) {
	defer close(b.decoded)
	defer func() {
		_, _ = io.Copy(io.Discard, pr)
		if !b.scan.ended {
			b.c.initialBytes.Add(b.wire.Load())
		}
	}()
	zr, err := gzip.NewReader(pr)
	if err != nil {
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := zr.Read(buf)
		if _, found := b.scan.scan(buf[:n]); found {
			b.c.initialBytes.Add(b.wire.Load())
		}
		if err != nil {
			return
		}
	}
}

// streamScanner counts the events of a (decoded) watch stream as its bytes
// come, in one goroutine: with initial events, those that start before the
// end of the first initialEventsEnd (which may be split across calls) in
// c.initialEvents, the rest in c.events.
type streamScanner struct {
	initial bool
	c       watchCounts
	frames  frameCounter
	// ended: the marker has been read, or there is none to read; tail:
	// the last bytes read before it, fewer than the marker's, in case it
	// began in them.
	ended bool
	tail  []byte
}

// scan reads p; found: the marker ends in p, at end.
func (s *streamScanner) scan(p []byte) (end int, found bool) {
	if s.ended {
		s.c.events.Add(s.frames.feed(p))
		return 0, false
	}
	seen := append(s.tail, p...)
	i := bytes.Index(seen, initialEventsEnd)
	if i < 0 {
		s.c.initialEvents.Add(s.frames.feed(p))
		keep := min(len(seen), len(initialEventsEnd)-1)
		s.tail = append(s.tail[:0:0], seen[len(seen)-keep:]...)
		return 0, false
	}
	// The marker ends in p (the tail is shorter than it).
	end = i + len(initialEventsEnd) - len(s.tail)
	s.c.initialEvents.Add(s.frames.feed(p[:end]))
	s.ended, s.tail = true, nil
	s.frames.skipLine = !s.frames.protobuf // JSON: the rest of the bookmark's line
	s.c.events.Add(s.frames.feed(p[end:]))
	return end, true
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
