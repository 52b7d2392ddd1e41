package fencing

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/transport"
)

// WrapTransport returns a wrapper for rest.Config.Wrap that refuses, while
// fence returns an error, every request that may change the cluster (POST,
// PUT, PATCH, DELETE) except those to the coordination.k8s.io API group,
// where the leases live, and the creates of review resources (TokenReview,
// SubjectAccessReview and their kin), which store nothing. A refused
// request is not sent: RoundTrip returns an error wrapping fence's, which
// client-go does not retry. Reads always pass; events are writes too. A nil
// fence never refuses. The RoundTripper is safe for concurrent use if fence
// is. Use it with reconcile.Config.Fence, which stops a sync before it
// queues more writes; this is the last check, after client-go's rate
// limiter. How the API group is read from the path, and why both checks:
// docs/design/fencing-transport.md.
//
//	rc.Wrap(fencing.WrapTransport(lock.Fence))
func WrapTransport(fence func() error) transport.WrapperFunc {
	return wrapper(fence, "", false)
}

func wrapper(fence func() error, prefix string, exact bool) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		if fence == nil {
			return next
		}
		return &guard{next: next, fence: fence, prefix: prefix, exact: exact}
	}
}

// guard is the RoundTripper WrapTransport installs. It is safe for
// concurrent use if fence is.
type guard struct {
	next  http.RoundTripper
	fence func() error
	// exact: the path prefix of rest.Config.Host is known (WrapConfig), and
	// the API path follows it directly. Otherwise the API path begins at
	// the first segment "api" or "apis".
	exact  bool
	prefix string
}

// RoundTrip refuses a fenced request that may write, else passes it on.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if mutating(req.Method) && !g.exempt(req) {
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

// groupResource names a resource of an API group.
type groupResource struct{ group, resource string }

// reviews are the resources whose every create is a question: the API
// server answers it in the response and stores nothing (in k8s.io/api
// v0.37 the types generated with create as their only verb).
var reviews = map[groupResource]bool{
	{"authentication.k8s.io", "tokenreviews"}:             true,
	{"authentication.k8s.io", "selfsubjectreviews"}:       true,
	{"authorization.k8s.io", "subjectaccessreviews"}:      true,
	{"authorization.k8s.io", "selfsubjectaccessreviews"}:  true,
	{"authorization.k8s.io", "localsubjectaccessreviews"}: true,
	{"authorization.k8s.io", "selfsubjectrulesreviews"}:   true,
}

// exempt reports whether a mutating request may pass a closed fence: any
// request to coordination.k8s.io, a POST to the collection of a review
// resource. A path it cannot read is not exempt.
func (g *guard) exempt(req *http.Request) bool {
	if req.URL.RawPath != "" {
		return false // escaped characters: client-go sends none to these groups
	}
	p := req.URL.Path
	if g.exact {
		tail, ok := strings.CutPrefix(p, g.prefix)
		if !ok || !strings.HasPrefix(tail, "/") {
			return false
		}
		p = tail
	}
	group, tail, ok := apiPath(p, g.exact)
	if !ok {
		return false
	}
	if group == "coordination.k8s.io" {
		return true
	}
	if req.Method != http.MethodPost {
		return false
	}
	var resource string
	switch {
	case len(tail) == 1: // cluster-scoped: /apis/<group>/<version>/<resource>
		resource = tail[0]
	case len(tail) == 3 && tail[0] == "namespaces": // …/namespaces/<ns>/<resource>
		resource = tail[2]
	default:
		return false
	}
	return reviews[groupResource{group, resource}]
}

// apiPath reads a Kubernetes API path, /api/<version>/… (the core group,
// "") or /apis/<group>/<version>/…: the group and the segments after the
// version. The API path begins at the first segment "api" or "apis", which
// must be the first segment of p when atStart. ok is false without such a
// segment, or with an empty group or version.
func apiPath(p string, atStart bool) (group string, tail []string, ok bool) {
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ { // segs[0] precedes the leading slash
		switch segs[i] {
		case "api":
			if i+1 < len(segs) && segs[i+1] != "" {
				return "", segs[i+2:], true
			}
			return "", nil, false
		case "apis":
			if i+2 < len(segs) && segs[i+1] != "" && segs[i+2] != "" {
				return segs[i+1], segs[i+3:], true
			}
			return "", nil, false
		}
		if atStart {
			return "", nil, false
		}
	}
	return "", nil, false
}
