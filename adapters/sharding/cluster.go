package sharding

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// WrapCluster returns c as the Controller of h's shard must see it:
//
//   - Owners answers for the shard's owners only: Get of another shard's
//     owner is NotFound (its sync finds nothing to do), List and
//     ListByController leave other shards' owners out. That is the
//     client-side filter; with a sharded owner watch ([Shard.TweakOwners]
//     with [ServerSide]) the cache holds the shard's owners only and the
//     filter keeps them all. Related owners are therefore those of
//     the same shard.
//   - PodClient stamps each pod it creates with [BucketLabel], the bucket of
//     the pod's controller (a template that sets the label to another value
//     is refused, as the owned-pods stamp is), and records the
//     resourceVersion of every pod it creates or patches with [Held.Wrote];
//     it is a reconcile.PodStamper whose stamp for an owner is
//     c.PodClient's (if any) with the owner's bucket label, so the
//     Controller refuses a selector or template that excludes the bucket
//     as an invalid spec and puts a removed or changed bucket
//     label back on a live pod; it keeps c.PodClient's
//     reconcile.PodGetter.
//   - StatusWriter records the resourceVersion of every status it writes.
//   - Pods adds to the shard's pods those of unstamped (nil: none) that the
//     shard's owners control, and those [Unstamped.Stamp] patched that the
//     pod cache does not show yet, each pod once.
//   - CachesSynced also waits for unstamped's first list and for the
//     hand-over: until c.CacheVersions report caches at or past
//     [Held.Resume], the shard's syncs are deferred (reconcile.ErrNotSynced),
//     so the first sync after a hand-over reads caches that hold the
//     previous holder's last writes. A cache that reports no version ("",
//     AtomicFIFO off) cannot be compared: its first list is trusted, as an
//     unsharded controller's is.
//
// It does not set Config.Fence: give the Controller h.Fence there, and
// build its clients from fencing.WrapConfig(cfg, h.Fence). WrapCluster
// never modifies c; fields it does not wrap are copied.
func WrapCluster[T reconcile.Object](h *Held, c reconcile.Cluster[T], unstamped *Unstamped) reconcile.Cluster[T] {
	out := c
	if c.Pods != nil {
		p := pods{inner: c.Pods, held: h, unstamped: unstamped, version: c.CacheVersions.Pods}
		out.Pods = p
		if by, ok := c.Pods.(reconcile.PodsByController); ok {
			out.Pods = podsByController{pods: p, by: by}
		}
	}
	if c.Owners != nil {
		if by, ok := c.Owners.(reconcile.OwnersByController[T]); ok {
			out.Owners = ownersByController[T]{owners: owners[T]{inner: c.Owners, shard: h.shard, resource: c.Resource}, by: by}
		} else {
			out.Owners = owners[T]{inner: c.Owners, shard: h.shard, resource: c.Resource}
		}
	}
	if c.PodClient != nil {
		pc := &podClient{inner: c.PodClient, held: h}
		out.PodClient = pc
		if g, ok := c.PodClient.(reconcile.PodGetter); ok {
			out.PodClient = &podClientGetter{podClient: pc, getter: g}
		}
	}
	if c.StatusWriter != nil {
		out.StatusWriter = statusWriter[T]{inner: c.StatusWriter, held: h}
	}
	synced := c.CachesSynced
	var caught atomic.Bool
	versions := c.CacheVersions
	out.CachesSynced = func() bool {
		if synced == nil || !synced() || !unstamped.synced() {
			return false
		}
		if caught.Load() {
			return true
		}
		if !reached(versions.Pods, h.resume) || !reached(versions.Owners, h.resume) {
			return false
		}
		caught.Store(true)
		return true
	}
	return out
}

// reached reports whether the cache whose version version reports has
// reached rv: true when there is nothing to reach or no version to compare.
func reached(version func() string, rv string) bool {
	if rv == "" || version == nil {
		return true
	}
	v := version()
	return v == "" || !newer(rv, v)
}

// owners is an Owners that answers for one shard's owners.
type owners[T reconcile.Object] struct {
	inner    reconcile.Owners[T]
	shard    Shard
	resource schema.GroupResource // for NotFound errors
}

func (o owners[T]) Get(namespace, name string) (T, error) {
	obj, err := o.inner.Get(namespace, name)
	if err != nil || isNil(obj) {
		return obj, err
	}
	if !o.shard.Contains(obj.GetUID()) {
		var zero T
		return zero, o.notFound(name)
	}
	return obj, nil
}

func (o owners[T]) notFound(name string) error {
	err := apierrors.NewNotFound(o.resource, name)
	err.ErrStatus.Message = fmt.Sprintf("%s (sharding: in another shard than %v)", err.ErrStatus.Message, o.shard)
	return err
}

func (o owners[T]) List(namespace string) ([]T, error) {
	all, err := o.inner.List(namespace)
	return o.keep(all), err
}

func (o owners[T]) GetLive(ctx context.Context, namespace, name string) (T, error) {
	return o.inner.GetLive(ctx, namespace, name)
}

// keep returns the owners of all in the shard, in a new slice.
func (o owners[T]) keep(all []T) []T {
	var out []T
	for _, obj := range all {
		if !isNil(obj) && o.shard.Contains(obj.GetUID()) {
			out = append(out, obj)
		}
	}
	return out
}

type ownersByController[T reconcile.Object] struct {
	owners[T]
	by reconcile.OwnersByController[T]
}

func (o ownersByController[T]) ListByController(namespace string, uid types.UID) ([]T, error) {
	all, err := o.by.ListByController(namespace, uid)
	return o.keep(all), err
}

// podClient stamps the bucket and records the versions of its writes.
type podClient struct {
	inner reconcile.PodClient
	held  *Held
}

var (
	_ reconcile.PodStamper = (*podClient)(nil)
	_ reconcile.PodGetter  = (*podClientGetter)(nil)
)

func (p *podClient) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil, errors.New("sharding: a pod to create has no controller reference, so no bucket")
	}
	bucket := BucketValue(ref.UID)
	if have, ok := pod.Labels[BucketLabel]; ok && have != bucket {
		return nil, fmt.Errorf("sharding: the pod template sets label %s=%q, the owner's bucket is %q", BucketLabel, have, bucket)
	}
	stamped := *pod
	stamped.Labels = make(map[string]string, len(pod.Labels)+1)
	maps.Copy(stamped.Labels, pod.Labels)
	stamped.Labels[BucketLabel] = bucket
	created, err := p.inner.CreatePod(ctx, &stamped)
	if err == nil && created != nil {
		p.held.Wrote(created.ResourceVersion)
	}
	return created, err
}

func (p *podClient) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	return p.inner.DeletePod(ctx, pod)
}

func (p *podClient) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	patched, err := p.inner.PatchPod(ctx, pod, data)
	if err == nil && patched != nil {
		p.held.Wrote(patched.ResourceVersion)
	}
	return patched, err
}

// PodStamp is the wrapped client's stamp for owner (none when it has
// none) and, for a non-nil owner, the owner's bucket label, which
// CreatePod adds to every pod it creates for it. The Controller checks the
// owner's selector and template against both and puts both back
// on a controlled pod that lost them: a pod whose bucket label an
// outside actor removed or changed is stamped back into its owner's shard,
// rather than replaced.
func (p *podClient) PodStamp(owner metav1.Object) map[string]string {
	var inner map[string]string
	if s, ok := p.inner.(reconcile.PodStamper); ok {
		inner = s.PodStamp(owner)
	}
	if owner == nil {
		return inner
	}
	stamp := make(map[string]string, len(inner)+1)
	maps.Copy(stamp, inner)
	stamp[BucketLabel] = BucketValue(owner.GetUID())
	return stamp
}

// podClientGetter is a podClient over a reconcile.PodGetter, which it keeps.
type podClientGetter struct {
	*podClient
	getter reconcile.PodGetter
}

func (p *podClientGetter) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return p.getter.GetPod(ctx, namespace, name)
}

type statusWriter[T reconcile.Object] struct {
	inner reconcile.StatusWriter[T]
	held  *Held
}

func (w statusWriter[T]) WriteStatus(ctx context.Context, next T) (T, error) {
	written, err := w.inner.WriteStatus(ctx, next)
	if err == nil && !isNil(written) {
		w.held.Wrote(written.GetResourceVersion())
	}
	return written, err
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// pods lists the shard's pods: the pod cache's, and those without the
// bucket label that the shard's owners control.
type pods struct {
	inner     reconcile.Pods
	held      *Held
	unstamped *Unstamped
	version   func() string
}

func (p pods) List(namespace string) ([]*corev1.Pod, error) {
	cached, err := p.inner.List(namespace)
	if err != nil {
		return cached, err
	}
	return p.merge(cached, p.unstamped.inShard(p.held.shard, namespace), p.held.inFlight(p.cacheVersion(), namespace, "", cached)), nil
}

func (p pods) cacheVersion() string {
	if p.version == nil {
		return ""
	}
	return p.version()
}

// merge returns cached followed by the pods of extra not among them (by
// UID), in a new slice when anything is added.
func (p pods) merge(cached []*corev1.Pod, extra ...[]*corev1.Pod) []*corev1.Pod {
	n := 0
	for _, e := range extra {
		n += len(e)
	}
	if n == 0 {
		return cached
	}
	seen := make(map[types.UID]bool, len(cached)+n)
	out := make([]*corev1.Pod, 0, len(cached)+n)
	for _, pod := range cached {
		if pod != nil {
			seen[pod.UID] = true
		}
		out = append(out, pod)
	}
	for _, e := range extra {
		for _, pod := range e {
			if !seen[pod.UID] {
				seen[pod.UID] = true
				out = append(out, pod)
			}
		}
	}
	return out
}

type podsByController struct {
	pods
	by reconcile.PodsByController
}

func (p podsByController) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	cached, err := p.by.ListByController(namespace, kind, name, uid)
	if err != nil {
		return cached, err
	}
	return p.merge(cached, p.unstamped.of(namespace, uid), p.held.inFlight(p.cacheVersion(), namespace, uid, cached)), nil
}
