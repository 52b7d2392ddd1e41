package ctrlruntime

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// PodLookup returns the [perpod.PodLookup] that perpod.Tracker.Observe
// reads, over a controller-runtime reader (in a manager: mgr.GetClient(),
// which reads the cache; mgr.GetAPIReader() reads the API server): given a
// pod key, "namespace/name" ("/name" or "name": no namespace), the pod read
// with ctx, or nil and no error when the reader reports NotFound. A
// malformed key is an error; the reader's other errors are returned as they
// are (Observe names the pod key); a nil reader makes every lookup an error,
// a nil ctx is context.Background(). The reader decides whether the pod is
// a copy (the manager's client deep-copies what it reads from its cache).
// The lookup compares no UID: a pod re-created under an expected name counts
// as present. Safe for concurrent use when the reader is.
func PodLookup(ctx context.Context, reader client.Reader) perpod.PodLookup {
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
			return nil, err
		}
		return &pod, nil
	}
}
