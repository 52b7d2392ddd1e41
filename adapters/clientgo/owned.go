package clientgo

import (
	"fmt"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// OwnedPods is an owned-only pod cache as one value: the labels a
// [PodControl] stamps on every pod it creates and the pod informer's
// selection of the pods carrying them (a label selector on every list and
// watch) and, with dropFinished, of the pods that are neither Succeeded
// nor Failed (a status.phase field selector). Built once by
// [NewOwnedPods], it feeds both, so that the controller always sees the
// pods it creates:
//
//	owned, err := clientgo.NewOwnedPods(map[string]string{"example.com/managed-by": "my-controller"}, true)
//	pods := owned.Factory(client, 0, informers.WithTransform(clientgo.LeanPods))
//	cfg, err := clientgo.NewConfig(client, pods, kind, clientgo.ConfigOptions{}) // its PodControl stamps owned's labels
//
// A client-go informer factory's list options cannot be read back, so
// OwnedPods is the only way this package sets both: [NewConfig] given the
// factory of [OwnedPods.Factory] stamps that value's labels; a PodControl
// built by hand takes them from [OwnedPods.Labels] of the same value. (A pod cache that selects pods the stamp does not
// carry would not see the pods the controller creates, and the controller
// would create them again on every sync; the Controller also stops
// creating for an owner whose created pods never appear in its cache.)
//
// The zero OwnedPods stamps nothing and selects every pod, as upstream.
// Beyond upstream: orphans without the labels are never adopted (R-13.5;
// what else changes: docs/design/lean-caches.md). An OwnedPods is
// immutable and safe for concurrent use.
type OwnedPods struct {
	owned podops.Owned
	// shard is a label requirement the pods' selector also carries:
	// sharding.BucketLabel in a shard's buckets (ForShard), or its absence
	// (Unsharded); "" for none.
	shard string
}

// NewOwnedPods returns the OwnedPods of labels (copied) and dropFinished.
// With no labels and dropFinished false it is the zero OwnedPods. Labels
// that are not a valid label set are an error.
func NewOwnedPods(labels map[string]string, dropFinished bool) (OwnedPods, error) {
	owned, err := podops.NewOwned(labels, dropFinished)
	if err != nil {
		return OwnedPods{}, fmt.Errorf("clientgo: NewOwnedPods: %w", err)
	}
	return OwnedPods{owned: owned}, nil
}

// Labels returns a copy of the labels to stamp on every created pod, for
// PodControl.Labels; nil when there are none.
func (o OwnedPods) Labels() map[string]string {
	return maps.Clone(o.owned.Stamp)
}

// Factory returns a new informer factory for the pods, over client, with
// resync and options (e.g. informers.WithNamespace,
// informers.WithTransform(LeanPods)), whose informers list and watch only
// the pods o selects: o's list options are applied after options, so an
// informers.WithTweakListOptions among them has no effect. The selection
// applies to every informer of the factory: use it for the pods alone.
// With the zero OwnedPods its informers select every object, as upstream.
//
// [NewConfig] given this factory stamps o's labels on every pod it creates.
func (o OwnedPods) Factory(client kubernetes.Interface, resync time.Duration, options ...informers.SharedInformerOption) informers.SharedInformerFactory {
	return o.factory(client, resync, false, options)
}

// factory is Factory; lean appends informers.WithTransform(LeanPods) after
// options, and the factory remembers it.
func (o OwnedPods) factory(client kubernetes.Interface, resync time.Duration, lean bool, options []informers.SharedInformerOption) informers.SharedInformerFactory {
	ls, fs := o.owned.ListSelectors()
	if o.shard != "" {
		if ls != "" {
			ls += ","
		}
		ls += o.shard
	}
	tweak := informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector, lo.FieldSelector = ls, fs
	})
	all := append(append(make([]informers.SharedInformerOption, 0, len(options)+2), options...), tweak)
	if lean {
		all = append(all, informers.WithTransform(LeanPods))
	}
	return ownedFactory{
		SharedInformerFactory: informers.NewSharedInformerFactoryWithOptions(client, resync, all...),
		owned:                 o,
		lean:                  lean,
	}
}

// ownedFactory is an informer factory that [OwnedPods.Factory] or
// [Production.Factory] made: it remembers its OwnedPods, and whether its
// transform is LeanPods, so that NewConfig stamps what the pod informer
// selects and checks the profile's pods.
type ownedFactory struct {
	informers.SharedInformerFactory
	owned OwnedPods
	lean  bool
}

// ownedOf returns the OwnedPods whose Factory made factory and whether it
// is lean; the zero OwnedPods and false for any other factory.
func ownedOf(factory informers.SharedInformerFactory) (OwnedPods, bool) {
	f, ok := factory.(ownedFactory)
	if !ok {
		return OwnedPods{}, false
	}
	return f.owned, f.lean
}
