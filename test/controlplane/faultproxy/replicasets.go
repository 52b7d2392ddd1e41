package faultproxy

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
)

// The API group versions whose collections the proxy recognises.
var (
	coreV1 = []string{"api", "v1"}
	appsV1 = []string{"apis", "apps", "v1"}
)

// collectionGet reports whether r is a GET of resource's collection in the
// group version at prefix (coreV1, appsV1), cluster-wide or in one
// namespace, and whether it is a watch: watch=true (or 1), or any request
// under the deprecated watch/ path prefix. A named object (…/resource/name)
// or its subresource is not a collection.
func collectionGet(r *http.Request, prefix []string, resource string) (ok, watch bool) {
	if r.Method != http.MethodGet {
		return false, false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) <= len(prefix) || !slices.Equal(parts[:len(prefix)], prefix) {
		return false, false
	}
	parts = parts[len(prefix):]
	watchPrefix := parts[0] == "watch"
	if watchPrefix {
		parts = parts[1:]
	}
	ok = (len(parts) == 1 && parts[0] == resource) ||
		(len(parts) == 3 && parts[0] == "namespaces" && parts[1] != "" && parts[2] == resource)
	if !ok {
		return false, false
	}
	switch r.URL.Query().Get("watch") {
	case "true", "1":
		return true, true
	}
	return true, watchPrefix
}

// IsReplicaSetWatch reports whether r is a ReplicaSet watch: a GET of
// apps/v1 replicasets, cluster-wide or in one namespace, with watch=true
// (or 1), or the same under the deprecated /apis/apps/v1/watch/ prefix. A
// watch of one named ReplicaSet is not one. The proxy counts these
// responses' bytes ([Stats].ReplicaSetWatchBytes): a sharded controller's
// owner watches, each of which kube-apiserver may narrow to a shard.
func IsReplicaSetWatch(r *http.Request) bool {
	ok, watch := collectionGet(r, appsV1, "replicasets")
	return ok && watch
}

// IsReplicaSetList reports whether r is a ReplicaSet list: a GET of apps/v1
// replicasets, cluster-wide or in one namespace, that is not a watch
// ([IsReplicaSetWatch]). The proxy counts these responses' bytes
// ([Stats].ReplicaSetListBytes).
func IsReplicaSetList(r *http.Request) bool {
	ok, watch := collectionGet(r, appsV1, "replicasets")
	return ok && !watch
}

// countedBody is a response body that adds every byte read from it to n.
// It alters nothing: the reverse proxy reads and flushes it as it would
// the body it wraps.
type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
