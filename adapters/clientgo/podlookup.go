package clientgo

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// PodLookup returns the pod lookup a Tracker's Observe reads, over the pod
// informer's lister (e.g. factory.Core().V1().Pods().Lister()): given a pod
// key, "namespace/name" ("/name" or "name": no namespace), it returns the
// cached pod, or nil and no error when the cache has none. A malformed key
// is an error, as is every error of the lister other than NotFound; a nil
// lister makes every lookup an error. The pod is the cache's and must not
// be modified. Safe for concurrent use.
func PodLookup(lister corelisters.PodLister) func(podKey string) (*corev1.Pod, error) {
	return func(podKey string) (*corev1.Pod, error) {
		if lister == nil {
			return nil, errors.New("clientgo: PodLookup has no PodLister")
		}
		namespace, name, err := podops.SplitPodKey(podKey)
		if err != nil {
			return nil, fmt.Errorf("clientgo: %w", err)
		}
		pod, err := lister.Pods(namespace).Get(name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("clientgo: looking up pod %s: %w", podKey, err)
		}
		return pod, nil
	}
}
