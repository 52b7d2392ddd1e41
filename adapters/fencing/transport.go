package fencing

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/transport"
)

// WrapTransport returns a wrapper for rest.Config.Wrap that refuses, while
// fence returns an error, every request that may change the cluster: every
// POST, PUT, PATCH and DELETE, except
//   - requests to the coordination.k8s.io API group, where the leases live,
//     so that the elector renews and a standby acquires;
//   - creates (POST) of the review resources, which the API server answers
//     and stores nothing of: TokenReview and SelfSubjectReview
//     (authentication.k8s.io), SubjectAccessReview, SelfSubjectAccessReview,
//     LocalSubjectAccessReview and SelfSubjectRulesReview
//     (authorization.k8s.io). A server that authenticates and authorizes
//     its callers through the API server (controller-runtime's
//     filters.WithAuthenticationAndAuthorization on the metrics endpoint,
//     a webhook) sends them, on a standby too.
//
// The API group is read from the request path, where client-go puts it:
// /apis/<group>/<version>/… (the core group: /api/<version>/…), after the
// path prefix of rest.Config.Host, if any. Not knowing the prefix,
// WrapTransport takes the first path segment "api" or "apis" as the start
// of the API path; give a Host whose path has such a segment to
// [WrapConfig], which knows it. Names further down the path never count:
// an object named coordination.k8s.io, even of a custom resource whose
// plural is "apis", is fenced like any other.
//
// A refused request is not sent: RoundTrip returns an error that wraps
// fence's, and client-go does not retry it. Reads (GET, HEAD, watches)
// always pass.
//
// It is the last check before the wire, after client-go's rate limiter:
// a write that waited there while the process was paused is refused when
// it finally leaves. Use it together with reconcile.Config.Fence, which
// stops a sync before it queues further writes and keeps its expectations
// right; the transport alone would make the library see failed calls.
// Events are writes too: a fenced replica records none. A nil fence never
// refuses. The RoundTripper is safe for concurrent use if fence is.
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
