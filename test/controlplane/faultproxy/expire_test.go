package faultproxy_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// TestExpirePodWatchesBefore: a pod watch resuming from a version below the
// horizon is answered 410 Expired without reaching the API server; pod
// watches from no version, from "0", from the horizon on or asking for
// initial events pass, as do lists, other watches and versions that are
// not numbers; a hold is applied first; "" turns the fault off and a bad
// horizon changes nothing.
func TestExpirePodWatchesBefore(t *testing.T) {
	const all, pods, cms = "/api/v1/pods", "/api/v1/namespaces/ns/pods", "/api/v1/namespaces/ns/configmaps"
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			fu := newWatchUpstream(all, pods, cms)
			up := newUpstream(t, fu)
			p := startProxy(t, up, testingclock.NewFakeClock(t0))
			c := newClient(t, up, proto.major)

			require.NoError(t, p.ExpirePodWatchesBefore("100"))
			expired := []string{
				all + "?watch=true&resourceVersion=99",
				pods + "?watch=1&resourceVersion=1&allowWatchBookmarks=true",
				"/api/v1/watch/namespaces/ns/pods?resourceVersion=42",
				pods + "?watch=true&resourceVersion=7&sendInitialEvents=false",
			}
			for i, target := range expired {
				resp, b := send(t, c, p.URL(), "GET", target, nil)
				isStatus(t, resp, b, http.StatusGone, metav1.StatusReasonExpired)
				assert.Equal(t, int64(i+1), p.Stats().PodWatchesExpired, target)
			}
			for _, path := range []string{all, pods, "/api/v1/watch/namespaces/ns/pods"} {
				assert.Zero(t, fu.count(fu.opened, path), "%s reached the API server", path)
			}

			// Watches that start from current state, or from the horizon on.
			passing := []struct{ path, query string }{
				{pods, "watch=true"},
				{pods, "watch=true&resourceVersion=0"},
				{pods, "watch=true&resourceVersion=100"},
				{all, "watch=true&resourceVersion=101"},
				{pods, "watch=true&resourceVersion=5&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"},
				{pods, "watch=true&resourceVersion=abc"},
				{cms, "watch=true&resourceVersion=5"},
			}
			for _, w := range passing {
				before := fu.count(fu.opened, w.path)
				openStream(t, c, p.URL()+w.path+"?"+w.query, proto.major)
				assert.Equal(t, before+1, fu.count(fu.opened, w.path), "%s?%s reached the API server", w.path, w.query)
			}
			assert.Equal(t, int64(len(passing)-1), p.Stats().PodWatches)
			passesThrough(t, c, up, p, &fu.rec, "GET", pods+"?resourceVersion=5")
			passesThrough(t, c, up, p, &fu.rec, "GET", pods+"/web-1?resourceVersion=5")
			passesThrough(t, c, up, p, &fu.rec, "POST", pods)

			// A hold comes first; after the release the expiry applies.
			p.HoldPodWatches(true)
			resp, b := send(t, c, p.URL(), "GET", pods+"?watch=true&resourceVersion=3", nil)
			isStatus(t, resp, b, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
			p.HoldPodWatches(false)
			resp, b = send(t, c, p.URL(), "GET", pods+"?watch=true&resourceVersion=3", nil)
			isStatus(t, resp, b, http.StatusGone, metav1.StatusReasonExpired)

			for _, bad := range []string{"abc", "-1", "1.5", " 7"} {
				assert.ErrorContains(t, p.ExpirePodWatchesBefore(bad), "faultproxy: ExpirePodWatchesBefore", bad)
			}
			resp, b = send(t, c, p.URL(), "GET", pods+"?watch=true&resourceVersion=3", nil)
			isStatus(t, resp, b, http.StatusGone, metav1.StatusReasonExpired)

			require.NoError(t, p.ExpirePodWatchesBefore(""))
			before := fu.count(fu.opened, pods)
			openStream(t, c, p.URL()+pods+"?watch=true&resourceVersion=3", proto.major)
			assert.Equal(t, before+1, fu.count(fu.opened, pods), "the fault is off")
			st := p.Stats()
			assert.Equal(t, int64(len(expired)+2), st.PodWatchesExpired)
			assert.Equal(t, int64(1), st.PodWatchesHeld)
		})
	}
}

// TestClientGoExpiredWatch: client-go's REST client turns the expired
// watch into the error its reflector lists again after, without retrying.
func TestClientGoExpiredWatch(t *testing.T) {
	fu := newWatchUpstream("/api/v1/namespaces/ns/pods")
	up := newUpstream(t, fu)
	p := startProxy(t, up, testingclock.NewFakeClock(t0))
	rc := restClient(t, up, p)
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	require.NoError(t, p.ExpirePodWatchesBefore("10"))
	_, err := rc.Get().Namespace("ns").Resource("pods").Param("watch", "true").Param("resourceVersion", "9").Watch(ctx)
	assert.True(t, apierrors.IsResourceExpired(err), "expired watch: %v", err)
	assert.Equal(t, int64(1), p.Stats().PodWatchesExpired, "not retried")
}
