package ctrlruntime

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// OwnedPods returns the cache configuration that restricts the pod cache to
// the pods a [PodControl] with the same labels creates (a Label selector)
// and, with dropFinished, to pods that are neither Succeeded nor Failed (a
// Field selector on status.phase). Put it in the manager's cache options
// under the pod type (cache.Options.ByObject), with [LeanPods] as its
// Transform if wanted, and give [NewConfig] the same labels
// (ConfigOptions.PodLabels), as the example does. Label is nil without labels and Field nil without
// dropFinished, so the cache's defaults (DefaultLabelSelector,
// DefaultFieldSelector) apply; where set, controller-runtime uses them
// instead of the defaults for pods, so AND a default field selector in
// yourself (fields.AndSelectors), as examples/podset does with -namespace.
//
// What changes from upstream's all-pods view is in docs/rules.md, R-13.5
// and on clientgo.OwnedPods: unlabeled orphans are never seen nor adopted,
// released pods stay visible, a controlled pod stripped of the labels
// leaves the cache as if deleted, and finished pods are neither adopted nor
// released. Labels that are not a valid label set are an error.
func OwnedPods(labels map[string]string, dropFinished bool) (cache.ByObject, error) {
	sel, fsel, err := podops.Selectors(labels, dropFinished)
	if err != nil {
		return cache.ByObject{}, fmt.Errorf("ctrlruntime: OwnedPods: %w", err)
	}
	var out cache.ByObject
	if len(labels) > 0 {
		out.Label = sel
	}
	if dropFinished {
		out.Field = fsel
	}
	return out, nil
}
