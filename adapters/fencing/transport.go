package fencing

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/transport"
)

// WrapTransport returns a wrapper for rest.Config.Wrap that refuses, while
// fence returns an error, every mutating request (POST, PUT, PATCH,
// DELETE) except those to the coordination.k8s.io API group, where the
// leases live. A refused request is not sent: RoundTrip returns an error
// that wraps fence's, and client-go does not retry it. Reads always pass.
//
// It is the last check before the wire, after client-go's rate limiter:
// a write that waited there while the process was paused is refused when
// it finally leaves. Use it together with reconcile.Config.Fence, which
// stops a sync before it queues further writes and keeps its expectations
// right; the transport alone would make the library see failed calls.
// Events are writes too: a fenced replica records none. A nil fence never
// refuses.
//
//	rc.Wrap(fencing.WrapTransport(lock.Fence))
func WrapTransport(fence func() error) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		if fence == nil {
			return next
		}
		return &guard{next: next, fence: fence}
	}
}

// guard is the RoundTripper WrapTransport installs. It is safe for
// concurrent use if fence is.
type guard struct {
	next  http.RoundTripper
	fence func() error
}

// RoundTrip refuses a fenced mutating request, else passes it on.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if mutating(req.Method) && !strings.Contains(req.URL.Path, "/apis/coordination.k8s.io/") {
		if err := g.fence(); err != nil {
			if req.Body != nil {
				_ = req.Body.Close() // a RoundTripper closes the body, even on error
			}
			return nil, fmt.Errorf("fencing: %s %s not sent: %w", req.Method, req.URL.Path, err)
		}
	}
	return g.next.RoundTrip(req)
}

// WrappedRoundTripper returns the wrapped RoundTripper, for client-go's
// transport helpers (k8s.io/apimachinery/pkg/util/net.RoundTripperWrapper).
func (g *guard) WrappedRoundTripper() http.RoundTripper { return g.next }

func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
