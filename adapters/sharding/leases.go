package sharding

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The labels and annotations of a coordination group's Leases.
const (
	// GroupLabel names the group (Options.Name) on each of its Leases; the
	// Coordinator lists and watches the Leases carrying it.
	GroupLabel = "sharding.reconcilekit.io/group"
	// shardAnnotation is "index/count" on a shard's Lease.
	shardAnnotation = "sharding.reconcilekit.io/shard"
	// shardsAnnotation is, on a replica's Lease, the number of shards K the
	// replica runs with: a replica counts only the replicas of its own K in
	// its fair share.
	shardsAnnotation = "sharding.reconcilekit.io/shards"
	// WrittenAnnotation is, on a shard's Lease, the newest resourceVersion
	// of the shard's writes its holder knew of at its last renewal or at
	// its release: what the next holder's caches must reach before the
	// shard's first sync ([Held.Resume]).
	WrittenAnnotation = "sharding.reconcilekit.io/written"
)

// store is how a Coordinator reads and writes its group's Leases: the API
// server in production, an in-memory one in the model test.
type store interface {
	// cached returns the group's Leases as last seen by a watch: it may lag.
	cached() ([]*coordinationv1.Lease, error)
	// live lists the group's Leases from the API server, a consistent read.
	live(ctx context.Context) ([]*coordinationv1.Lease, error)
	create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
	// update fails with a Conflict when l's resourceVersion is not the stored one.
	update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
	// remove deletes the Lease named name if its resourceVersion is still rv.
	remove(ctx context.Context, name, rv string) error
}

// apiStore is the store of a Coordinator: Leases of one namespace and
// group, watched by an informer, written through client.
type apiStore struct {
	client    kubernetes.Interface
	namespace string
	selector  string
	informer  cache.SharedIndexInformer
}

func newAPIStore(client kubernetes.Interface, namespace, group string, changed func()) (*apiStore, error) {
	selector := labels.Set{GroupLabel: group}.String()
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := factory.Coordination().V1().Leases().Informer()
	notify := func(any) { changed() }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, cur any) { notify(cur) },
		DeleteFunc: notify,
	}); err != nil {
		return nil, fmt.Errorf("sharding: watching the Leases: %w", err)
	}
	return &apiStore{client: client, namespace: namespace, selector: selector, informer: inf}, nil
}

func (s *apiStore) cached() ([]*coordinationv1.Lease, error) {
	objs := s.informer.GetStore().List()
	out := make([]*coordinationv1.Lease, 0, len(objs))
	for _, o := range objs {
		if l, ok := o.(*coordinationv1.Lease); ok {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *apiStore) live(ctx context.Context) ([]*coordinationv1.Lease, error) {
	list, err := s.client.CoordinationV1().Leases(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: s.selector})
	if err != nil {
		return nil, err
	}
	out := make([]*coordinationv1.Lease, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (s *apiStore) create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return s.client.CoordinationV1().Leases(s.namespace).Create(ctx, l, metav1.CreateOptions{})
}

func (s *apiStore) update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return s.client.CoordinationV1().Leases(s.namespace).Update(ctx, l, metav1.UpdateOptions{})
}

func (s *apiStore) remove(ctx context.Context, name, rv string) error {
	return s.client.CoordinationV1().Leases(s.namespace).Delete(ctx, name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
}

// shardLeaseName is the name of the Lease of shard s in group.
func shardLeaseName(group string, s Shard) string {
	return group + "-shard-" + strconv.Itoa(s.Index) + "-of-" + strconv.Itoa(s.Count)
}

// replicaLeaseName is the name of the membership Lease of identity in
// group: the identity's hash, since an identity (a host name, a UUID) need
// not be a valid name.
func replicaLeaseName(group, identity string) string {
	return group + "-replica-" + fmt.Sprintf("%016x", Hash(types.UID(identity)))
}

// validGroup checks that group can be a label value and the prefix of the
// group's Lease names.
func validGroup(group string) error {
	if errs := validation.IsValidLabelValue(group); group == "" || len(errs) > 0 {
		return fmt.Errorf("sharding: Name %q: want a non-empty label value: %s", group, strings.Join(errs, "; "))
	}
	longest := shardLeaseName(group, Shard{Index: Buckets - 1, Count: Buckets})
	if errs := validation.IsDNS1123Subdomain(strings.ToLower(longest)); len(errs) > 0 || strings.ToLower(group) != group {
		return fmt.Errorf("sharding: Name %q: the Lease names it starts (%s) must be lowercase DNS subdomains: %s", group, longest, strings.Join(errs, "; "))
	}
	return nil
}

// leaseShard returns the shard a Lease of the group is for, from its
// annotation; false for a replica's Lease or a malformed one.
func leaseShard(l *coordinationv1.Lease) (Shard, bool) {
	v, ok := l.Annotations[shardAnnotation]
	if !ok {
		return Shard{}, false
	}
	i, c, ok := strings.Cut(v, "/")
	if !ok {
		return Shard{}, false
	}
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(c)
	s := Shard{Index: index, Count: count}
	if err1 != nil || err2 != nil || s.Validate() != nil || l.Name != shardLeaseName(l.Labels[GroupLabel], s) {
		return Shard{}, false
	}
	return s, true
}

func holderOf(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func durationOf(l *coordinationv1.Lease, fallback time.Duration) time.Duration {
	if l == nil || l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds <= 0 {
		return fallback
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}
