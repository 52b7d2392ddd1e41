package ctrlruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
)

// listVersion is the resourceVersion of every list the fake API server
// answers and of its initial-events bookmark.
const listVersion = "5"

// apiServer is an API server for a controller-runtime cache that serves
// pods (indexPods) and no ReplicaSets, as a list and a watch (client-go
// before v0.35) or as a watch list ending in a bookmark (client-go's
// WatchListClient), and then a watch that delivers nothing more. It
// models nothing else: no other resource, no writes, no label or field
// selector, no resourceVersion but listVersion.
func apiServer(t *testing.T) *httptest.Server {
	t.Helper()
	var pods []runtime.Object
	for _, p := range indexPods() {
		p = p.DeepCopy()
		p.APIVersion, p.Kind = "v1", "Pod"
		p.ResourceVersion = listVersion
		pods = append(pods, p)
	}
	serve := func(w http.ResponseWriter, r *http.Request, listKind, apiVersion, kind string, items []runtime.Object) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		if q.Get("watch") != "true" {
			list := map[string]any{"kind": listKind, "apiVersion": apiVersion,
				"metadata": map[string]any{"resourceVersion": listVersion}, "items": items}
			require.NoError(t, json.NewEncoder(w).Encode(list))
			return
		}
		flusher, ok := w.(http.Flusher)
		require.True(t, ok)
		enc := json.NewEncoder(w)
		if q.Get("sendInitialEvents") == "true" {
			for _, it := range items {
				if enc.Encode(map[string]any{"type": "ADDED", "object": it}) != nil {
					return
				}
			}
			end := map[string]any{"kind": kind, "apiVersion": apiVersion, "metadata": map[string]any{
				"resourceVersion": listVersion, "annotations": map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
			if enc.Encode(map[string]any{"type": "BOOKMARK", "object": end}) != nil {
				return
			}
		}
		flusher.Flush()
		<-r.Context().Done()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/pods":
			serve(w, r, "PodList", "v1", "Pod", pods)
		case "/apis/apps/v1/replicasets":
			serve(w, r, "ReplicaSetList", "apps/v1", "ReplicaSet", []runtime.Object{})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startedCache is controller-runtime's default cache (what a manager
// builds) over apiServer, with AddIndexes' indexes registered before it
// starts, as Register does, and synced.
func startedCache(t *testing.T) cache.Cache {
	t.Helper()
	srv := apiServer(t)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	c, err := cache.New(&rest.Config{Host: srv.URL}, cache.Options{Scheme: clientgoscheme.Scheme, Mapper: mapper})
	require.NoError(t, err)
	require.NoError(t, AddIndexes[*appsv1.ReplicaSet](t.Context(), c))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	// A bound on a hung start, not a timed assertion: the fake server
	// answers at once.
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	require.True(t, c.WaitForCacheSync(syncCtx), "the cache synced")
	return c
}

// failingReader is a client.Reader whose every read fails: a lookup that
// answers through it did not take the fast path.
type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return fmt.Errorf("the reader was called")
}

// the fast paths on a running controller-runtime cache, at both ends of
// the supported range (`make unit` at adapters/go.mod's floor, `make
// compat` at the newest controller-runtime and client-go): the Pods
// NewConfig builds read the informer's pod index directly (its answers are
// the cache's own pods, and the reader behind it is never called), on
// every supported controller-runtime; the caches' versions are tracked
// exactly where client-go supports it (v0.36 and newer: the list's or the
// bookmark's version) and "" before. A controller-runtime that renames its
// index or changes its key layout, or a client-go from v0.36 whose stores
// stop tracking a version, fails here instead of silently falling back.
func TestFastPathsOnARunningCache(t *testing.T) {
	c := startedCache(t)
	reader, err := client.New(&rest.Config{Host: "https://127.0.0.1:1"}, client.Options{
		Scheme: clientgoscheme.Scheme, Mapper: meta.NewDefaultRESTMapper(nil), Cache: &client.CacheOptions{Reader: c}})
	require.NoError(t, err)
	cfg, err := newConfig[*appsv1.ReplicaSet](reader, reader, c, clientgoscheme.Scheme, record.NewFakeRecorder(10), ConfigOptions{})
	require.NoError(t, err)

	pods, ok := cfg.Cluster.Pods.(Pods)
	require.True(t, ok, "NewConfig's Pods is a %T", cfg.Cluster.Pods)
	assert.True(t, pods.DirectIndex(), "the pod index is read directly")
	store := storeOf(t, c)
	direct := Pods{Reader: failingReader{}, index: pods.index}
	got, err := direct.ListByController("default", "ReplicaSet", "web", "uid-web")
	require.NoError(t, err, "answered without the reader")
	var want []string
	for _, p := range indexPods() {
		if podops.ControlledByOrOrphan(p, "default", "ReplicaSet", "web", types.UID("uid-web")) {
			want = append(want, p.Name)
		}
	}
	assert.ElementsMatch(t, want, names(got))
	for _, p := range got {
		cached, exists, err := store.Get(p)
		require.NoError(t, err)
		require.True(t, exists)
		assert.Same(t, cached, p, "the cache's own pod, not a copy")
	}

	minor, ok := storeversion.ClientGoMinor()
	require.True(t, ok, "the test binary names its k8s.io/client-go version")
	tracked := minor >= storeversion.TrackedFrom
	wantVersion := ""
	if tracked {
		wantVersion = listVersion
	}
	assert.Equal(t, tracked, storeversion.Active(), "client-go v0.%d", minor)
	assert.Equal(t, wantVersion, cfg.Cluster.CacheVersions.Pods(), "client-go v0.%d: the pods' cache version", minor)
	assert.Equal(t, wantVersion, cfg.Cluster.CacheVersions.Owners(), "client-go v0.%d: the owners' cache version", minor)
}

// missingIndex is the one reading of controller-runtime's text:
// each reader's answer to a list by a field it has no index for, on a
// running cache and on the fake client, is recognised, at both ends of the
// supported range; a release that rewords one fails here (and the lookups
// would return its error rather than take it for a missing index). Other
// errors are not a missing index, even when they name the field.
func TestMissingIndexWording(t *testing.T) {
	const field = "example.com/unindexed"
	c := startedCache(t)
	var list corev1.PodList
	cacheErr := c.List(t.Context(), &list, client.InNamespace("default"), client.MatchingFields{field: "x"})
	require.Error(t, cacheErr)
	assert.True(t, missingIndex(cacheErr, field), "the cache's wording: %q", cacheErr)
	assert.False(t, missingIndex(cacheErr, "example.com/other"), "another field's")

	fakeClient := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	fakeErr := fakeClient.List(t.Context(), &list, client.InNamespace("default"), client.MatchingFields{field: "x"})
	require.Error(t, fakeErr)
	assert.True(t, missingIndex(fakeErr, field), "the fake client's wording: %q", fakeErr)

	for _, err := range []error{
		nil,
		fmt.Errorf("listing by %s: connection refused", field),
		fmt.Errorf("field label not supported: %s", field),
	} {
		assert.False(t, missingIndex(err, field), "%v", err)
	}
}
