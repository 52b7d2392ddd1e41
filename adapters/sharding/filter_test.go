package sharding_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// carries reports whether this build's metav1.ListOptions has the
// ShardSelector field (k8s.io/apimachinery v0.36+): the adapters' floor
// (go test in adapters) does not, the newest (make compat) does. The tests
// assert the branch of the build they run in.
func carries() bool {
	_, ok := reflect.TypeFor[metav1.ListOptions]().FieldByName("ShardSelector")
	return ok
}

// shardSelectorOf reads ListOptions.ShardSelector by reflection; "" when
// the field does not exist.
func shardSelectorOf(o *metav1.ListOptions) string {
	v := reflect.ValueOf(o).Elem().FieldByName("ShardSelector")
	if !v.IsValid() {
		return ""
	}
	return v.String()
}

// probeServer records the paths and queries of the requests an
// httptest API server answers.
type probeServer struct {
	mu      sync.Mutex
	paths   []string
	queries []url.Values
}

func newProbeServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*probeServer, rest.Interface) {
	t.Helper()
	p := &probeServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.Path)
		p.queries = append(p.queries, r.URL.Query())
		p.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return p, cs.Discovery().RESTClient()
}

func (p *probeServer) requests() ([]string, []url.Values) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...), append([]url.Values(nil), p.queries...)
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(body))
}

// A sharding API server echoes the shard selector in metadata.shardInfo.
func echoShardInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"7","shardInfo":{"selector":`+
		quote(r.URL.Query().Get("shardSelector"))+`}},"items":[]}`)
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
var replicaSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}

// DetectFiltering by the API server's answer: ServerSide only when the
// shardInfo echoes the selector sent. At the adapters' floor, whose
// ListOptions cannot carry a shard selector, it is ClientSide without a
// request.
func TestDetectFiltering(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answer     func(w http.ResponseWriter, r *http.Request)
		want       sharding.Filtering
		wantReason string
		wantErr    string
	}{
		{name: "selector echoed", answer: echoShardInfo, want: sharding.ServerSide, wantReason: "the API server selects by shard"},
		{name: "no shardInfo", answer: func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`)
		}, want: sharding.ClientSide, wantReason: "the API server does not select by shard"},
		{name: "another selector", answer: func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, `{"kind":"List","apiVersion":"v1","metadata":{"shardInfo":{"selector":"shardRange(object.metadata.uid, '0x0', '0x1')"}},"items":[]}`)
		}, want: sharding.ClientSide, wantReason: "the API server does not select by shard"},
		{name: "500", answer: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, want: sharding.ClientSide, wantReason: "the probe list failed", wantErr: "sharding: probing shard selectors on "},
		{name: "not JSON", answer: func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, `{"metadata":`)
		}, want: sharding.ClientSide, wantReason: "did not decode", wantErr: "sharding: probing shard selectors on "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := newProbeServer(t, tc.answer)
			got, reason, err := sharding.DetectFiltering(t.Context(), client, replicaSetsGVR, ns)
			paths, queries := srv.requests()
			if !carries() {
				require.NoError(t, err)
				assert.Equal(t, sharding.ClientSide, got)
				assert.Contains(t, reason, "ShardSelector")
				assert.Empty(t, paths, "no request at the floor")
				return
			}
			assert.Equal(t, tc.want, got)
			assert.Contains(t, reason, tc.wantReason)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, paths, 1)
			assert.Equal(t, "1", queries[0].Get("limit"))
			assert.Equal(t, sharding.Shard{Index: 0, Count: 1}.Selector(), queries[0].Get("shardSelector"))
		})
	}
}

// The probe lists the resource under /api for the core group and /apis
// for the others, in the namespace or in all.
func TestDetectFilteringPath(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resource  schema.GroupVersionResource
		namespace string
		want      string
	}{
		{name: "core, namespace", resource: podsGVR, namespace: ns, want: "/api/v1/namespaces/default/pods"},
		{name: "core, all", resource: podsGVR, want: "/api/v1/pods"},
		{name: "apps, namespace", resource: replicaSetsGVR, namespace: "team-a", want: "/apis/apps/v1/namespaces/team-a/replicasets"},
		{name: "apps, all", resource: replicaSetsGVR, want: "/apis/apps/v1/replicasets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := newProbeServer(t, echoShardInfo)
			got, _, err := sharding.DetectFiltering(t.Context(), client, tc.resource, tc.namespace)
			require.NoError(t, err)
			paths, _ := srv.requests()
			if !carries() {
				assert.Equal(t, sharding.ClientSide, got)
				assert.Empty(t, paths)
				return
			}
			assert.Equal(t, sharding.ServerSide, got)
			assert.Equal(t, []string{tc.want}, paths)
		})
	}
}

// TweakOwners sets the shard's selector with ServerSide where ListOptions
// can carry it, and changes nothing otherwise.
func TestTweakOwners(t *testing.T) {
	s := sharding.Shard{Index: 1, Count: 4}
	for _, tc := range []struct {
		name      string
		shard     sharding.Shard
		filtering sharding.Filtering
		want      string
	}{
		{name: "server-side", shard: s, filtering: sharding.ServerSide, want: s.Selector()},
		{name: "client-side", shard: s, filtering: sharding.ClientSide},
		{name: "invalid shard", shard: sharding.Shard{Index: 4, Count: 4}, filtering: sharding.ServerSide},
		{name: "zero shard", filtering: sharding.ServerSide},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name=x", Limit: 5}
			want := o
			tc.shard.TweakOwners(tc.filtering)(&o)
			if carries() && tc.want != "" {
				reflect.ValueOf(&want).Elem().FieldByName("ShardSelector").SetString(tc.want)
				assert.Equal(t, tc.want, shardSelectorOf(&o))
			}
			assert.Equal(t, want, o, "nothing else changes")
			if !carries() {
				assert.Empty(t, shardSelectorOf(&o))
			}
		})
	}
}

func TestFilteringString(t *testing.T) {
	assert.Equal(t, "server-side", sharding.ServerSide.String())
	assert.Equal(t, "client-side", sharding.ClientSide.String())
}
