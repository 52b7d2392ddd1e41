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

func TestWrapTransport(t *testing.T) {
	errFenced := errors.New("lease lost")
	cases := []struct {
		method, path string
		fenced       bool
		wantSent     bool
	}{
		{"GET", "/api/v1/namespaces/default/pods", true, true},
		{"LIST", "/api/v1/pods", true, true},
		{"POST", "/api/v1/namespaces/default/pods", false, true},
		{"POST", "/api/v1/namespaces/default/pods", true, false},
		{"PUT", "/apis/apps/v1/namespaces/default/replicasets/web/status", true, false},
		{"PATCH", "/api/v1/namespaces/default/pods/web-1", true, false},
		{"DELETE", "/api/v1/namespaces/default/pods/web-1", true, false},
		{"POST", "/api/v1/namespaces/default/events", true, false},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/rs", true, true},
		{"POST", "/prefix/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			wire := &sent{}
			fence := func() error {
				if tc.fenced {
					return errFenced
				}
				return nil
			}
			rt := fencing.WrapTransport(fence)(wire)
			body := &closeCounter{Reader: strings.NewReader("{}")}
			req, err := http.NewRequest(tc.method, "https://127.0.0.1:6443"+tc.path, body)
			require.NoError(t, err)
			resp, err := rt.RoundTrip(req)
			if tc.wantSent {
				require.NoError(t, err)
				_ = resp.Body.Close()
				assert.Len(t, wire.paths, 1)
				return
			}
			assert.ErrorIs(t, err, errFenced)
			assert.ErrorContains(t, err, "not sent")
			assert.Empty(t, wire.paths)
			assert.Equal(t, 1, body.closed, "the body is closed")
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
