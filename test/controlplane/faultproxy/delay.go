package faultproxy

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// errClosed ends the delayed reads when the proxy closes.
var errClosed = errors.New("faultproxy: closed")

// chunk is one read from the upstream body and when it arrived.
type chunk struct {
	data []byte
	at   time.Time
}

// delayedBody is a pod watch response body: a reader goroutine takes the
// upstream bytes as they come and stamps them; Read hands them out, in
// order, once the proxy's current delay has passed since their arrival.
// Read has one caller (the reverse proxy's copy loop). Closing cut ends
// the stream cleanly at once (see [Proxy.CutPodWatches]).
type delayedBody struct {
	p    *Proxy
	ctx  context.Context // the request's: done when the client goes away
	src  io.ReadCloser
	cut  <-chan struct{}
	wake chan struct{} // the reader has queued a chunk or stopped (capacity 1)
	done chan struct{} // the reader has returned

	mu    sync.Mutex
	queue []chunk
	err   error // the reader's final error (io.EOF at the stream's end)

	wasCut    bool // Read only: the cut is counted once
	closeOnce sync.Once
}

// delayBody wraps src, to be ended when cut closes; the caller has
// registered the reader goroutine with p.enter.
func (p *Proxy) delayBody(ctx context.Context, src io.ReadCloser, cut <-chan struct{}) *delayedBody {
	b := &delayedBody{p: p, ctx: ctx, src: src, cut: cut, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go b.readLoop()
	return b
}

func (b *delayedBody) readLoop() {
	defer b.p.active.Done()
	defer close(b.done)
	for {
		buf := make([]byte, 32<<10)
		n, err := b.src.Read(buf)
		now := b.p.clock.Now()
		b.mu.Lock()
		if n > 0 {
			b.queue = append(b.queue, chunk{data: buf[:n:n], at: now})
		}
		if err != nil {
			b.err = err
		}
		b.mu.Unlock()
		b.p.bytesIn.Add(int64(n))
		select {
		case b.wake <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// Read waits for the oldest buffered chunk and for its release time (its
// arrival plus the current delay, re-read whenever the delay changes), then
// copies it out; once the watch is cut, it ends the stream instead.
func (b *delayedBody) Read(out []byte) (int, error) {
	select {
	case <-b.cut:
		return b.cutShort()
	default:
	}
	var head chunk
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			head = b.queue[0]
			b.mu.Unlock()
			break
		}
		err := b.err
		b.mu.Unlock()
		if err != nil {
			return 0, err
		}
		select {
		case <-b.wake:
		case <-b.cut:
			return b.cutShort()
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		case <-b.p.closing:
			return 0, errClosed
		}
	}
	for {
		delay, changed := b.p.delayState()
		due := head.at.Add(delay)
		wait := due.Sub(b.p.clock.Now())
		if wait <= 0 {
			break
		}
		t := b.p.clock.NewTimer(wait)
		// The clock may have moved between reading it and arming the
		// timer (a fake clock's Step does, and a timer armed after the
		// step would wait past due): look again now that it is armed.
		if !b.p.clock.Now().Before(due) {
			t.Stop()
			break
		}
		select {
		case <-t.C():
		case <-changed:
			t.Stop()
		case <-b.cut:
			t.Stop()
			return b.cutShort()
		case <-b.ctx.Done():
			t.Stop()
			return 0, b.ctx.Err()
		case <-b.p.closing:
			t.Stop()
			return 0, errClosed
		}
	}
	n := copy(out, head.data)
	b.mu.Lock()
	if n == len(head.data) {
		b.queue[0] = chunk{}
		b.queue = b.queue[1:]
	} else {
		b.queue[0].data = head.data[n:]
	}
	b.mu.Unlock()
	b.p.bytesOut.Add(int64(n))
	return n, nil
}

// cutShort ends the stream as the API server ends a watch: io.EOF, which
// the reverse proxy turns into a clean end of the response. The bytes still
// held back are dropped.
func (b *delayedBody) cutShort() (int, error) {
	if !b.wasCut {
		b.wasCut = true
		b.p.watchesCut.Add(1)
	}
	return 0, io.EOF
}

// Close closes the upstream body, which ends the reader, and waits for it.
func (b *delayedBody) Close() error {
	var err error
	b.closeOnce.Do(func() { err = b.src.Close() })
	<-b.done
	return err
}
