package faultproxy_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// TestDropPodCreateResponses: the next n pod creates the API server accepts
// reach it as sent, and their clients get a 504 Timeout in place of the
// 201; refused creates, other POSTs and every other request pass through
// unaltered; a new count replaces the pending one, 0 cancels it.
func TestDropPodCreateResponses(t *testing.T) {
	rec := &recorder{}
	up := newUpstream(t, rec)
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			c := newClient(t, up, proto.major)
			dropped := func(target string) {
				t.Helper()
				body := payload("pod "+target, 3000)
				before := len(rec.all())
				resp, b := send(t, c, p.URL(), "POST", target, body)
				isStatus(t, resp, b, http.StatusGatewayTimeout, metav1.StatusReasonTimeout)
				got := rec.all()[before:]
				require.Len(t, got, 1, "%s: forwarded once", target)
				u, err := url.Parse(target)
				require.NoError(t, err)
				assert.Equal(t, []any{"POST", u.Path, u.RawQuery, body}, []any{got[0].method, got[0].path, got[0].query, got[0].body})
			}
			pass := func(method, target string) {
				t.Helper()
				passesThrough(t, c, up, p, rec, method, target)
			}

			p.DropPodCreateResponses(2)
			pass("POST", "/api/v1/namespaces/ns/pods/web-1/eviction")
			pass("POST", "/api/v1/namespaces/ns/pods/web-1/binding")
			pass("POST", "/api/v1/namespaces/ns/configmaps")
			pass("GET", "/api/v1/namespaces/ns/pods")
			pass("PUT", "/api/v1/namespaces/ns/pods/web-1")
			pass("POST", "/api/v1/namespaces/refused/pods") // 403: nothing applied, nothing dropped
			assert.Zero(t, p.Stats().PodCreateResponsesDropped)
			dropped("/api/v1/namespaces/ns/pods")
			pass("GET", "/api/v1/namespaces/ns/pods?watch=false")
			dropped("/api/v1/namespaces/other/pods?fieldManager=rs")
			assert.Equal(t, int64(2), p.Stats().PodCreateResponsesDropped)
			pass("POST", "/api/v1/namespaces/ns/pods") // the two are spent

			p.DropPodCreateResponses(3)
			p.DropPodCreateResponses(1) // replaces the 3
			dropped("/api/v1/namespaces/ns/pods")
			pass("POST", "/api/v1/namespaces/ns/pods")
			p.DropPodCreateResponses(5)
			p.DropPodCreateResponses(0)
			pass("POST", "/api/v1/namespaces/ns/pods")
			p.DropPodCreateResponses(-1)
			pass("POST", "/api/v1/namespaces/ns/pods")

			st := p.Stats()
			assert.Equal(t, int64(3), st.PodCreateResponsesDropped)
			assert.Zero(t, st.WritesFailed)
		})
	}
}

// TestIsPodCreate: a pod create is a POST of pods in a namespace, nothing
// else.
func TestIsPodCreate(t *testing.T) {
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/api/v1/namespaces/ns/pods", true},
		{"POST", "/api/v1/namespaces/ns/pods/", true},
		{"POST", "/api/v1/namespaces/ns/pods?fieldManager=rs&pretty=true", true},
		{"POST", "/api/v1/pods", false},
		{"POST", "/api/v1/namespaces//pods", false},
		{"POST", "/api/v1/namespaces/ns/pods/web-1", false},
		{"POST", "/api/v1/namespaces/ns/pods/web-1/eviction", false},
		{"POST", "/api/v1/namespaces/ns/podtemplates", false},
		{"POST", "/apis/example.com/v1/namespaces/ns/pods", false},
		{"PUT", "/api/v1/namespaces/ns/pods", false},
		{"PATCH", "/api/v1/namespaces/ns/pods", false},
		{"GET", "/api/v1/namespaces/ns/pods", false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		assert.Equal(t, c.want, faultproxy.IsPodCreate(r), "%s %s", c.method, c.target)
	}
}
