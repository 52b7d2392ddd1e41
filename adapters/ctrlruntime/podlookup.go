package ctrlruntime

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// PodLookup returns the pod lookup a Tracker's Observe reads, over a
// controller-runtime reader (in a manager: mgr.GetClient(), which reads the
// cache): given a pod key, "namespace/name" ("/name" or "name": no
// namespace), it gets the pod with ctx, and returns nil and no error when
// the reader reports NotFound. A malformed key is an error, as is every
// other error of the reader; a nil reader makes every lookup an error, a
// nil ctx is context.Background().
// The reader decides whether the pod is a copy (the manager's client
// deep-copies what it reads from its cache). Safe for concurrent use when
// the reader is.
func PodLookup(ctx context.Context, reader client.Reader) func(podKey string) (*corev1.Pod, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return func(podKey string) (*corev1.Pod, error) {
		if reader == nil {
			return nil, errors.New("ctrlruntime: PodLookup has no reader")
		}
		namespace, name, err := podops.SplitPodKey(podKey)
		if err != nil {
			return nil, fmt.Errorf("ctrlruntime: %w", err)
		}
		var pod corev1.Pod
		err = reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pod)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ctrlruntime: looking up pod %s: %w", podKey, err)
		}
		return &pod, nil
	}
}
