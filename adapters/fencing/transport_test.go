package fencing_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// sent records the requests that reached the wire.
type sent struct{ paths []string }

func (s *sent) RoundTrip(req *http.Request) (*http.Response, error) {
	s.paths = append(s.paths, req.Method+" "+req.URL.Path)
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(""))}, nil
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// roundTrip sends one request with a body through rt and reports whether
// it reached wire, checking that a refused one wraps errFenced, says so and
// has its body closed.
func roundTrip(t *testing.T, rt http.RoundTripper, wire *sent, method, url string, errFenced error) bool {
	t.Helper()
	body := &closeCounter{Reader: strings.NewReader("{}")}
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	before := len(wire.paths)
	resp, err := rt.RoundTrip(req)
	if err == nil {
		_ = resp.Body.Close()
		assert.Len(t, wire.paths, before+1)
		return true
	}
	assert.ErrorIs(t, err, errFenced)
	assert.ErrorContains(t, err, "fencing: "+method+" ")
	assert.ErrorContains(t, err, "not sent")
	assert.Len(t, wire.paths, before, "nothing reached the wire")
	assert.Equal(t, 1, body.closed, "the body is closed")
	return false
}

// a fenced replica sends no request that may change the cluster.
// The transport refuses every POST, PUT, PATCH and DELETE while the fence
// is closed, except requests to coordination.k8s.io (the lease itself) and
// creates of the review resources, which store nothing; reads pass. The
// group is the one the API path names, never a name further down.
func TestWrapTransport(t *testing.T) {
	errFenced := errors.New("lease lost")
	type tc struct {
		rule, method, path string
		passes             bool // while fenced
	}
	var cases []tc
	pass := func(rule, method string, paths ...string) {
		for _, p := range paths {
			cases = append(cases, tc{rule, method, p, true})
		}
	}
	refuse := func(rule, method string, paths ...string) {
		for _, p := range paths {
			cases = append(cases, tc{rule, method, p, false})
		}
	}
	pass("reads pass", "GET", "/api/v1/namespaces/default/pods", "/api/v1/pods?watch=true",
		"/apis/apps/v1/namespaces/default/replicasets/web", "/version")
	pass("reads pass", "HEAD", "/api/v1/namespaces/default/pods/web-1")
	pass("reviews store nothing: their creates pass", "POST",
		"/apis/authentication.k8s.io/v1/tokenreviews",
		"/apis/authentication.k8s.io/v1beta1/tokenreviews",
		"/apis/authentication.k8s.io/v1/selfsubjectreviews",
		"/apis/authentication.k8s.io/v1beta1/selfsubjectreviews",
		"/apis/authentication.k8s.io/v1alpha1/selfsubjectreviews",
		"/apis/authorization.k8s.io/v1/subjectaccessreviews",
		"/apis/authorization.k8s.io/v1beta1/subjectaccessreviews",
		"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		"/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
		"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
		"/k8s/clusters/c-1/apis/authorization.k8s.io/v1/subjectaccessreviews", // a Host path prefix
	)
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		pass("the lease's group passes", m,
			"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/rs",
			"/k8s/clusters/c-1/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/rs")
	}
	refuse("writes are refused", "POST", "/api/v1/namespaces/default/pods",
		"/api/v1/namespaces/default/events",
		"/apis/events.k8s.io/v1/namespaces/default/events",
		"/api/v1/namespaces/default/pods/web-1/eviction",
		"/api/v1/namespaces/default/serviceaccounts/default/token", // TokenRequest mints a credential
		"/apis/authorization.k8s.io/v1/namespaces/default/roles",   // not a review
	)
	refuse("writes are refused", "PUT", "/apis/apps/v1/namespaces/default/replicasets/web/status")
	refuse("writes are refused", "PATCH", "/api/v1/namespaces/default/pods/web-1")
	refuse("writes are refused", "DELETE", "/api/v1/namespaces/default/pods/web-1", "/api/v1/namespaces/default/pods")
	refuse("a review is only created", "PUT", "/apis/authorization.k8s.io/v1/subjectaccessreviews/x")
	refuse("a review is only created", "DELETE", "/apis/authentication.k8s.io/v1/tokenreviews/x")
	refuse("a review is only created", "POST",
		"/apis/authentication.k8s.io/v1/tokenreviews/x",
		"/apis/authentication.k8s.io/v1/tokenreviews/",
		"/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews/x/status")
	refuse("the group is the API path's, not a name's", "POST",
		"/api/v1/namespaces/apis/pods/coordination.k8s.io/eviction", // a pod named coordination.k8s.io in namespace apis
		"/api/v1/namespaces/apis/pods/authorization.k8s.io/eviction",
		"/apis/example.com/v1/tokenreviews",
		"/apis/example.com/v1/namespaces/apis/authorization.k8s.io/subjectaccessreviews",
		"/k8s/clusters/c-1/api/v1/namespaces/apis/pods/coordination.k8s.io/eviction",
	)
	refuse("the group is the API path's, not a name's", "PATCH", "/api/v1/namespaces/apis/pods/coordination.k8s.io/status")
	refuse("the group is the API path's, not a name's", "DELETE", "/apis/apps/v1/namespaces/apis/replicasets/coordination.k8s.io")
	// A custom resource whose plural is "apis" (an API gateway's), named
	// coordination.k8s.io: its path holds "/apis/coordination.k8s.io/".
	refuse("the group is the API path's, not a name's", "PUT",
		"/apis/gateway.example.com/v1/namespaces/default/apis/coordination.k8s.io/status",
		"/apis/gateway.example.com/v1/apis/coordination.k8s.io/scale")
	refuse("the group is the API path's, not a name's", "POST",
		"/apis/gateway.example.com/v1/namespaces/default/apis/authorization.k8s.io/v1/subjectaccessreviews")
	refuse("an unreadable path is refused", "POST",
		"/apis/coordination.k8s.io", "/apis/coordination.k8s.io/", "/apis//v1/namespaces/kube-system/leases",
		"/apis/authorization.k8s.io%2Fv1/subjectaccessreviews", // escaped: the API server reads it otherwise
		"/", "")

	for _, c := range cases {
		t.Run(c.rule+"/"+c.method+" "+c.path, func(t *testing.T) {
			wire := &sent{}
			var closed bool
			rt := fencing.WrapTransport(func() error {
				if closed {
					return errFenced
				}
				return nil
			})(wire)
			assert.True(t, roundTrip(t, rt, wire, c.method, "https://127.0.0.1:6443"+c.path, errFenced), "open fence: everything passes")
			closed = true
			assert.Equal(t, c.passes, roundTrip(t, rt, wire, c.method, "https://127.0.0.1:6443"+c.path, errFenced), "closed fence")
		})
	}
	t.Run("nil fence: no wrapper", func(t *testing.T) {
		wire := &sent{}
		assert.Same(t, http.RoundTripper(wire), fencing.WrapTransport(nil)(wire))
	})
	t.Run("the wrapped transport is reachable", func(t *testing.T) {
		wire := &sent{}
		rt := fencing.WrapTransport(func() error { return nil })(wire)
		w, ok := rt.(interface{ WrappedRoundTripper() http.RoundTripper })
		require.True(t, ok)
		assert.Same(t, http.RoundTripper(wire), w.WrappedRoundTripper())
	})
}
