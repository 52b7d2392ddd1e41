package ctrlruntime

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// OwnedPods is an owned-only pod cache as one value: the labels the
// [PodControl] of [NewConfig] stamps on every pod it creates and the
// manager's pod cache restricted to the pods carrying them (a label
// selector) and, with dropFinished, to pods that are neither Succeeded
// nor Failed (a status.phase field selector). Built once by
// [NewOwnedPods], it feeds both, so that the controller always sees the
// pods it creates:
//
//	owned, err := ctrlruntime.NewOwnedPods(map[string]string{"example.com/managed-by": "podset"}, true)
//	opts.Cache, err = owned.CacheOptions(opts.Cache) // the manager's options, before ctrl.NewManager
//	cfg, err := ctrlruntime.NewConfig[*v1alpha1.PodSet](mgr, ctrlruntime.ConfigOptions{OwnedPods: owned})
//
// A manager does not expose the options its cache was built with, so
// NewConfig cannot check them: OwnedPods is the only way this package
// sets both, and [OwnedPods.CacheOptions] refuses options whose pod label
// selector the stamp does not meet. (A pod cache that selects pods the
// stamp does not carry would not see the pods the controller creates, and
// the controller would create them again on every sync; the Controller
// also stops creating for an owner whose created pods never appear in its
// cache.)
//
// The zero OwnedPods stamps nothing and restricts nothing, as upstream.
// What changes from upstream's all-pods view is in docs/rules.md, R-13.5:
// unlabeled orphans are never seen nor adopted, released pods stay
// visible, a controlled pod stripped of the labels leaves the cache as if
// deleted, and finished pods are neither adopted nor released. An
// OwnedPods is immutable and safe for concurrent use.
type OwnedPods struct {
	owned podops.Owned
	// shard is a label requirement the pod cache's selector also carries:
	// sharding.BucketLabel in a shard's buckets (ForShard), or its absence
	// (Unsharded); nil for none. It is not part of the stamp.
	shard labels.Selector
}

// NewOwnedPods returns the OwnedPods of labels (copied) and dropFinished.
// With no labels and dropFinished false it is the zero OwnedPods. Labels
// that are not a valid label set are an error.
func NewOwnedPods(labels map[string]string, dropFinished bool) (OwnedPods, error) {
	owned, err := podops.NewOwned(labels, dropFinished)
	if err != nil {
		return OwnedPods{}, fmt.Errorf("ctrlruntime: NewOwnedPods: %w", err)
	}
	return OwnedPods{owned: owned}, nil
}

// Labels returns a copy of the labels stamped on every created pod; nil
// when there are none.
func (o OwnedPods) Labels() map[string]string {
	return maps.Clone(o.owned.Stamp)
}

// CacheOptions returns opts, a manager's cache options, with the pod cache
// restricted to o: under the pod type in ByObject (the entry opts already
// has for pods, with its Transform and other settings kept, or a new
// one), the Label selector becomes o's labels, and with dropFinished the
// Field selector leaves out Succeeded and Failed pods. A selector the
// options already apply to pods (that entry's, else DefaultLabelSelector
// and DefaultFieldSelector, which controller-runtime would no longer
// apply to pods) is kept, ANDed with o's, so a -namespace field selector,
// say, still holds.
//
// It refuses, with an error and opts unchanged, a pod label selector
// already in opts that a pod carrying only o's labels does not meet (with
// the zero OwnedPods: any that selects fewer than every pod): the
// controller would not see the pods it creates. It also refuses opts with
// more than one ByObject entry for pods. opts itself is not modified (the
// ByObject map returned is new). With the zero OwnedPods and nothing to
// refuse it returns opts as they are.
//
// An OwnedPods restricted to a shard ([OwnedPods.ForShard],
// [OwnedPods.Unsharded]) also ANDs its bucket requirement into the pods'
// Label selector; the refusal above still checks the stamp alone.
func (o OwnedPods) CacheOptions(opts cache.Options) (cache.Options, error) {
	var podKey client.Object
	var pods cache.ByObject
	for obj, b := range opts.ByObject {
		if _, ok := obj.(*corev1.Pod); !ok {
			continue
		}
		if podKey != nil {
			return opts, fmt.Errorf("ctrlruntime: OwnedPods.CacheOptions: cache.Options.ByObject has two entries for pods")
		}
		podKey, pods = obj, b
	}
	label, from := pods.Label, "ByObject[&corev1.Pod{}].Label"
	if label == nil {
		label, from = opts.DefaultLabelSelector, "DefaultLabelSelector"
	}
	if !o.owned.Admits(label) {
		return opts, fmt.Errorf("ctrlruntime: OwnedPods.CacheOptions: the pod cache's label selector %q (cache.Options.%s) does not select pods carrying the labels the pod client stamps (%q): "+
			"the controller would not see the pods it creates and would create them again; add that selector's labels to the stamp or remove it", label, from, labels.Set(o.owned.Stamp))
	}
	restrict := len(o.owned.Stamp) > 0 || o.owned.DropFinished || o.shard != nil
	if !restrict {
		return opts, nil
	}
	if len(o.owned.Stamp) > 0 {
		pods.Label = and(o.owned.Label, label)
	}
	if o.shard != nil {
		base := pods.Label
		if base == nil {
			base = label
		}
		pods.Label = and(o.shard, base)
	}
	if o.owned.DropFinished {
		field := pods.Field
		if field == nil {
			field = opts.DefaultFieldSelector
		}
		pods.Field = o.owned.Field
		if field != nil && !field.Empty() {
			pods.Field = fields.AndSelectors(o.owned.Field, field)
		}
	}
	if podKey == nil {
		podKey = &corev1.Pod{}
	}
	byObject := make(map[client.Object]cache.ByObject, len(opts.ByObject)+1)
	maps.Copy(byObject, opts.ByObject)
	byObject[podKey] = pods
	opts.ByObject = byObject
	return opts, nil
}

// and returns a selector of sel's requirements and those of other (nil:
// none) that sel does not already have.
func and(sel, other labels.Selector) labels.Selector {
	if other == nil {
		return sel
	}
	reqs, selectable := other.Requirements()
	if !selectable {
		return labels.Nothing()
	}
	have, _ := sel.Requirements()
	for _, r := range reqs {
		if !slices.ContainsFunc(have, r.Equal) {
			sel = sel.Add(r)
		}
	}
	return sel
}
