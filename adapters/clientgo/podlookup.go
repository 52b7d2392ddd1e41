package clientgo

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// PodLookup returns the [perpod.PodLookup] that perpod.Tracker.Observe
// reads, over the pod informer's lister (e.g.
// factory.Core().V1().Pods().Lister()): given a pod key, "namespace/name"
// ("/name" or "name": no namespace), the cached pod, or nil and no error when
// the cache has none. A malformed key is an error; the lister's other errors
// are returned as they are (Observe names the pod key); a nil lister makes
// every lookup an error. The pod is the cache's and must not be modified.
// The lookup compares no UID: a pod re-created under an expected name counts
// as present. Safe for concurrent use.
func PodLookup(lister corelisters.PodLister) perpod.PodLookup {
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
			return nil, err
		}
		return pod, nil
	}
}
