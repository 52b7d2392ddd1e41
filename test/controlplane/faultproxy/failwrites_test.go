package faultproxy_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// writes are the requests FailWrites counts, in the order the tests send
// them: every method, pod creates and subresources included.
var writes = []struct{ method, target string }{
	{"POST", "/api/v1/namespaces/ns/pods"},
	{"PUT", "/apis/apps/v1/namespaces/ns/replicasets/web/status"},
	{"PATCH", "/api/v1/namespaces/ns/pods/web-1"},
	{"DELETE", "/api/v1/namespaces/ns/pods/web-1"},
	{"POST", "/apis/events.k8s.io/v1/namespaces/ns/events"},
	{"PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/rs"},
	{"POST", "/api/v1/namespaces/ns/pods/web-1/eviction"},
	{"DELETE", "/api/v1/namespaces/ns/pods?labelSelector=a%3Db"},
}

// TestFailWrites: the writes ⌈n·fraction⌉ says fail do, with the status
// commanded, without reaching the API server; every other request, reads
// between them included, passes through unaltered; fraction 0 restores
// pass-through.
func TestFailWrites(t *testing.T) {
	rec := &recorder{}
	up := newUpstream(t, rec)
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			c := newClient(t, up, proto.major)
			failed := int64(0)
			for _, tc := range []struct {
				name     string
				fraction float64
				code     int
				fail     []int // which of the writes, from 1
			}{
				{"all, 500", 1, 500, []int{1, 2, 3, 4, 5, 6, 7, 8}},
				{"half, 429", 0.5, 429, []int{1, 3, 5, 7}},
				{"a quarter, 500", 0.25, 500, []int{1, 5}},
				{"a third, 429", 1.0 / 3, 429, []int{1, 4, 7}},
				{"0.7, 500", 0.7, 500, []int{1, 2, 3, 5, 6, 8}},
				{"a millionth, 500", 1e-6, 500, []int{1}},
				{"off", 0, 0, nil},
			} {
				require.NoError(t, p.FailWrites(tc.fraction, tc.code), tc.name)
				for i, w := range writes {
					name := fmt.Sprintf("%s: write %d, %s %s", tc.name, i+1, w.method, w.target)
					// A read before each write is never failed nor counted.
					passesThrough(t, c, up, p, rec, "GET", "/api/v1/namespaces/ns/pods")
					if !slices.Contains(tc.fail, i+1) {
						passesThrough(t, c, up, p, rec, w.method, w.target)
						continue
					}
					before := len(rec.all())
					resp, b := send(t, c, p.URL(), w.method, w.target, []byte("{}"))
					reason := metav1.StatusReasonInternalError
					if tc.code == 429 {
						reason = metav1.StatusReasonTooManyRequests
					}
					isStatus(t, resp, b, tc.code, reason)
					assert.Len(t, rec.all(), before, "%s: not forwarded", name)
					failed++
					assert.Equal(t, failed, p.Stats().WritesFailed, name)
				}
			}
			assert.Equal(t, failed, p.Stats().WritesFailed)
		})
	}
}

// TestFailWritesRestarts: each call starts the count again, so the first
// write after it fails.
func TestFailWritesRestarts(t *testing.T) {
	rec := &recorder{}
	up := newUpstream(t, rec)
	p := startProxy(t, up, testingclock.NewFakeClock(t0))
	c := newClient(t, up, 2)
	require.NoError(t, p.FailWrites(0.5, 500))
	for _, want := range []int{500, 201, 500} {
		resp, _ := send(t, c, p.URL(), "POST", "/api/v1/namespaces/ns/configmaps", nil)
		assert.Equal(t, want, resp.StatusCode)
	}
	require.NoError(t, p.FailWrites(0.5, 500))
	resp, _ := send(t, c, p.URL(), "POST", "/api/v1/namespaces/ns/configmaps", nil)
	assert.Equal(t, 500, resp.StatusCode)
	assert.Equal(t, int64(3), p.Stats().WritesFailed)
}

// TestFailWritesErrors: bad arguments are errors that leave the fault as it
// was.
func TestFailWritesErrors(t *testing.T) {
	rec := &recorder{}
	up := newUpstream(t, rec)
	p := startProxy(t, up, testingclock.NewFakeClock(t0))
	c := newClient(t, up, 2)
	require.NoError(t, p.FailWrites(1, 429))
	for _, tc := range []struct {
		fraction float64
		code     int
	}{
		{0.5, 503}, {0.5, 0}, {1, 200}, {1.5, 500}, {-0.1, 500}, {math.NaN(), 500}, {math.Inf(1), 429},
	} {
		assert.ErrorContains(t, p.FailWrites(tc.fraction, tc.code), "faultproxy: ", "%v, %d", tc.fraction, tc.code)
	}
	resp, b := send(t, c, p.URL(), "DELETE", "/api/v1/namespaces/ns/pods/web-1", nil)
	isStatus(t, resp, b, 429, metav1.StatusReasonTooManyRequests)
	assert.NoError(t, p.FailWrites(0, 0))
	passesThrough(t, c, up, p, rec, "DELETE", "/api/v1/namespaces/ns/pods/web-1")
	assert.Equal(t, int64(1), p.Stats().WritesFailed)
	assert.Zero(t, p.Stats().PodCreateResponsesDropped+p.Stats().PodWatchesHeld+p.Stats().PodWatchesCut)
}
