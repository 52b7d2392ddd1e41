package ctrlruntime

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The recorder NewConfig gives the PodControl drops events until it runs,
// then posts core/v1 Events (as upstream's ReplicaSet controller) under
// its component, through the manager's rest.Config, until it stops.
func TestManagerRecorder(t *testing.T) {
	posted := make(chan corev1.Event, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev corev1.Event
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/default/events" && json.Unmarshal(body, &ev) == nil {
			posted <- ev
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	rec := &managerRecorder{config: &rest.Config{Host: srv.URL}, httpClient: srv.Client(), scheme: clientgoscheme.Scheme, component: "replicaset-controller"}
	owner := &corev1.ObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "default", Name: "web", UID: "u1"}
	rec.Eventf(owner, corev1.EventTypeNormal, "Early", "before Start: dropped")

	stop, err := rec.run(t.Context())
	require.NoError(t, err)
	rec.Eventf(owner, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", "web-abcde")
	ev := <-posted
	stop()
	rec.Eventf(owner, corev1.EventTypeNormal, "Late", "after the stop: dropped")
	assert.Equal(t, "SuccessfulCreate", ev.Reason)
	assert.Equal(t, "Created pod: web-abcde", ev.Message)
	assert.Equal(t, "replicaset-controller", ev.Source.Component)
	assert.Equal(t, "web", ev.InvolvedObject.Name)
	require.Empty(t, posted, "the event before Start was dropped")
	assert.Nil(t, rec.current(), "stopped")
}
