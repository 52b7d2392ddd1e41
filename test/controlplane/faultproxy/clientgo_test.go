package faultproxy_test

import (
	"context"
	"encoding/pem"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// restClient is a client-go REST client for the core group through p.
func restClient(t *testing.T, up *httptest.Server, p *faultproxy.Proxy) *rest.RESTClient {
	t.Helper()
	rc, err := rest.RESTClientFor(&rest.Config{
		Host:            p.URL(),
		APIPath:         "/api",
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})},
		ContentConfig: rest.ContentConfig{
			GroupVersion:         &schema.GroupVersion{Version: "v1"},
			NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		},
	})
	require.NoError(t, err)
	return rc
}

// TestClientGoErrors: client-go turns each answer of the proxy's into the
// error its doc promises, and retries exactly those it says. The retries
// after Retry-After: 1 take a second of real time each; two are made.
func TestClientGoErrors(t *testing.T) {
	fu := newWatchUpstream("/api/v1/namespaces/ns/pods")
	up := newUpstream(t, fu)
	p := startProxy(t, up, testingclock.NewFakeClock(t0))
	rc := restClient(t, up, p)
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	podWatch := func(retries int) error {
		w, err := rc.Get().Namespace("ns").Resource("pods").Param("watch", "true").MaxRetries(retries).Watch(ctx)
		if err == nil {
			w.Stop()
		}
		return err
	}

	p.HoldPodWatches(true)
	err := podWatch(0)
	assert.True(t, apierrors.IsTooManyRequests(err), "held watch: %v", err)
	delay, ok := apierrors.SuggestsClientDelay(err)
	assert.True(t, ok)
	assert.Equal(t, 1, delay)
	// With its default retries, the REST client tries again after the
	// second, and gets through once the hold is released.
	watched := make(chan error, 1)
	go func() { watched <- podWatch(10) }()
	eventually(t, "a second held attempt", func() bool { return p.Stats().PodWatchesHeld == 2 })
	p.HoldPodWatches(false)
	select {
	case err := <-watched:
		assert.NoError(t, err, "the watch after the release")
	case <-time.After(failsafe):
		t.Fatal("failsafe: the held watch was not retried")
	}
	assert.Equal(t, int64(2), p.Stats().PodWatchesHeld)

	p.DropPodCreateResponses(1)
	before := len(fu.rec.all())
	err = rc.Post().Namespace("ns").Resource("pods").Body([]byte("{}")).Do(ctx).Error()
	assert.True(t, apierrors.IsTimeout(err), "dropped create: %v", err)
	assert.Len(t, fu.rec.all(), before+1, "applied once, not retried")

	require.NoError(t, p.FailWrites(1, 500))
	err = rc.Put().Namespace("ns").Resource("configmaps").Name("c").Body([]byte("{}")).Do(ctx).Error()
	assert.True(t, apierrors.IsInternalError(err), "failed write, 500: %v", err)

	require.NoError(t, p.FailWrites(1, 429))
	err = rc.Delete().Namespace("ns").Resource("pods").Name("web-1").MaxRetries(0).Do(ctx).Error()
	assert.True(t, apierrors.IsTooManyRequests(err), "failed write, 429: %v", err)
	// With its default retries, the REST client retries the 429 after the
	// second, and the second write of two passes.
	require.NoError(t, p.FailWrites(0.5, 429))
	assert.NoError(t, rc.Delete().Namespace("ns").Resource("pods").Name("web-1").Do(ctx).Error())
	assert.Len(t, fu.rec.all(), before+2, "only the retry reached the API server")
	assert.Equal(t, int64(3), p.Stats().WritesFailed)
}
