package clientgo

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// OwnedPods returns the informer-factory option that restricts a pod
// informer to the pods a [PodControl] with the same labels creates, and,
// with dropFinished, to pods that are neither Succeeded nor Failed (a label
// selector and a status.phase field selector on every list and watch). With
// no labels and dropFinished false it selects every pod, as upstream. The
// option applies to every informer of the factory, so give the pods a
// factory of their own:
//
//	owned, err := clientgo.OwnedPods(map[string]string{"example.com/managed-by": "podset"}, true)
//	pods := informers.NewSharedInformerFactoryWithOptions(client, 0, owned,
//		informers.WithTransform(clientgo.LeanPods))
//	control := clientgo.PodControl{Client: client, Labels: map[string]string{"example.com/managed-by": "podset"}}
//
// Beyond upstream: orphans without the labels are never adopted (R-13.5;
// what else changes: docs/design/lean-caches.md). Labels that are not a
// valid label set are an error. OwnedPods keeps no reference to labels.
func OwnedPods(labels map[string]string, dropFinished bool) (informers.SharedInformerOption, error) {
	sel, fsel, err := podops.Selectors(labels, dropFinished)
	if err != nil {
		return nil, fmt.Errorf("clientgo: OwnedPods: %w", err)
	}
	ls, fs := sel.String(), fsel.String()
	return informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = ls, fs
	}), nil
}
