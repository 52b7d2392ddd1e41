package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Filtering says where a shard's owners are selected.
type Filtering int

const (
	// ClientSide: the owner informer lists and watches every owner, and
	// [WrapCluster]'s Owners leave out the other shards'. Each replica
	// caches and decodes every owner (owners, not pods: the pod caches are
	// selected by [BucketLabel] on every version).
	ClientSide Filtering = iota
	// ServerSide: the owner informer asks for the shard's owners with
	// metav1.ListOptions.ShardSelector (KEP-5866, feature gate
	// ShardedListAndWatch), so the API server sends only them.
	ServerSide
)

// String returns "client-side" or "server-side".
func (f Filtering) String() string {
	if f == ServerSide {
		return "server-side"
	}
	return "client-side"
}

// canCarry reports whether this build's metav1.ListOptions has the
// ShardSelector field (k8s.io/apimachinery v0.36+). The library builds
// against older releases too, so the field is found by name.
func canCarry() bool {
	_, ok := reflect.TypeFor[metav1.ListOptions]().FieldByName("ShardSelector")
	return ok
}

// DetectFiltering returns where the owners of resource can be selected by
// shard: ServerSide when this build's client library can send a shard
// selector and the API server answers a one-item list of resource (in
// namespace, "" for all) with the selector echoed in its shardInfo;
// ClientSide otherwise, with the reason. client is a REST client of the
// API server (a clientset's Discovery().RESTClient()). An error of the
// list itself is returned with ClientSide.
func DetectFiltering(ctx context.Context, client rest.Interface, resource schema.GroupVersionResource, namespace string) (Filtering, string, error) {
	if !canCarry() {
		return ClientSide, "the client library's ListOptions has no ShardSelector (k8s.io/apimachinery before v0.36)", nil
	}
	sel := Shard{Index: 0, Count: 1}.Selector()
	raw, err := client.Get().AbsPath(listPath(resource, namespace)).
		Param("limit", "1").
		Param("shardSelector", sel).
		SetHeader("Accept", "application/json").
		DoRaw(ctx)
	if err != nil {
		return ClientSide, "the probe list failed", fmt.Errorf("sharding: probing shard selectors on %s: %w", resource, err)
	}
	var list struct {
		Metadata struct {
			ShardInfo *struct {
				Selector string `json:"selector"`
			} `json:"shardInfo"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return ClientSide, "the probe list's answer did not decode", fmt.Errorf("sharding: probing shard selectors on %s: %w", resource, err)
	}
	if list.Metadata.ShardInfo == nil || list.Metadata.ShardInfo.Selector != sel {
		return ClientSide, "the API server does not select by shard (feature gate ShardedListAndWatch off, or kube-apiserver before v1.36)", nil
	}
	return ServerSide, "the API server selects by shard", nil
}

// listPath is the path of a list of resource in namespace ("" for all).
func listPath(r schema.GroupVersionResource, namespace string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	return path.Join(p, r.Resource)
}

// TweakOwners returns the list options tweak of the owner informer of s
// (informers.WithTweakListOptions, controller-runtime's cache.ByObject
// cannot carry it): with ServerSide it sets s's shard selector on every
// list and watch; with ClientSide, or for an invalid s, it changes nothing.
func (s Shard) TweakOwners(f Filtering) func(*metav1.ListOptions) {
	sel := s.Selector()
	return func(o *metav1.ListOptions) {
		if f != ServerSide || sel == "" {
			return
		}
		if v := reflect.ValueOf(o).Elem().FieldByName("ShardSelector"); v.IsValid() && v.CanSet() && v.Kind() == reflect.String {
			v.SetString(sel)
		}
	}
}
