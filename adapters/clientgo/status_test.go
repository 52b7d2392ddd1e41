package clientgo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
)

// The generic StatusWriter on a custom resource: upstream's write and its
// one retry on a freshly read object, the status asked for carried
// onto the fresh object, whose other fields are the server's; the owner
// passed in is never modified.
func TestStatusWriterRetry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int // UpdateStatus calls that fail with a conflict
		getErr    error
		wantCalls map[string]int
		wantErr   func(error) bool
	}{
		{"R-8.7 first write succeeds", 0, nil, map[string]int{"update/status": 1}, nil},
		{"R-8.7 one retry on a fresh object", 1, nil, map[string]int{"update/status": 2, "get": 1}, nil},
		{"R-8.7 the second failure is returned", 2, nil, map[string]int{"update/status": 2, "get": 1}, apierrors.IsConflict},
		{"R-8.7 the GET's error wins", 1, apierrors.NewServiceUnavailable("down"), map[string]int{"update/status": 1, "get": 1}, apierrors.IsServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apps := newWebApps()
			defer apps.source.Shutdown()
			stored := apps.Create(webApp("web", 2))
			apps.failUpdates, apps.getErr = tc.failures, tc.getErr

			next := stored.DeepCopyObject().(*WebApp)
			next.Status = WebAppStatus{Replicas: 2, ReadyReplicas: 1}
			next.Labels = map[string]string{"not": "written"} // a status write carries the status alone
			before := next.DeepCopyObject().(*WebApp)
			got, err := clientgo.StatusWriter[*WebApp]{Client: apps.Client}.WriteStatus(t.Context(), next)
			assert.Equal(t, tc.wantCalls, apps.Calls())
			assert.Equal(t, before, next, "the owner passed in is not modified")
			if tc.wantErr != nil {
				assert.True(t, tc.wantErr(err), "%v", err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, next.Status, got.Status, "the server's object, with the status asked for")
			written, _ := apps.Get(ns, "web")
			assert.Equal(t, next.Status, written.Status)
			assert.Nil(t, written.Labels)
		})
	}
}

// Bad input is an error before any call, never a panic.
func TestStatusWriterRefusals(t *testing.T) {
	apps := newWebApps()
	defer apps.source.Shutdown()
	_, err := clientgo.StatusWriter[*WebApp]{}.WriteStatus(t.Context(), webApp("web", 1))
	assert.ErrorContains(t, err, "clientgo: StatusWriter: nil Client")
	_, err = clientgo.StatusWriter[*WebApp]{Client: apps.Client}.WriteStatus(t.Context(), nil)
	assert.ErrorContains(t, err, "clientgo: StatusWriter: nil owner")
	_, err = clientgo.StatusWriter[*WebApp]{Client: func(string) clientgo.OwnerClient[*WebApp] { return nil }}.WriteStatus(t.Context(), webApp("web", 1))
	assert.ErrorContains(t, err, `clientgo: StatusWriter: Client returned no client for namespace "default"`)
	_, err = clientgo.StatusWriter[*noStatus]{Client: func(string) clientgo.OwnerClient[*noStatus] { return nil }}.WriteStatus(t.Context(), &noStatus{})
	assert.ErrorContains(t, err, "clientgo: StatusWriter: *clientgo_test.noStatus has no Status field")
	assert.Empty(t, apps.Calls())
}
