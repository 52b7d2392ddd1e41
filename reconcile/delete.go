package reconcile

import (
	"context"
	"errors"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/reconcilekit/reconcilekit/internal/panics"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// deletePods chooses n victims among pods, expects their deletion and
// deletes them all at once.
func (m *Manager) deletePods(ctx context.Context, o *Owner, pods, related []*corev1.Pod, n int, out Outcome) (Outcome, error) {
	now := m.now()
	out.Victims = podrank.ForDeletion(pods, related, n, m.Ranking.podrank(now))
	out.Expected = len(out.Victims)

	doomed := make([]*corev1.Pod, 0, len(out.Victims))
	for _, v := range out.Victims {
		if controlledByOther(v, o.Object) {
			out.NotOwned = append(out.NotOwned, v)
		} else {
			doomed = append(doomed, v)
		}
	}
	keys := make([]string, len(doomed))
	for i, p := range doomed {
		keys[i] = PodKey(p)
	}
	tracker := m.Tracker()
	// step 4: before any call, so that a fast delete event finds its key.
	tracker.ExpectDeletions(o.Key, keys)

	errs := make([]error, len(doomed))
	var panicked panics.Set
	gate := fenceGate{fence: m.Fence, key: o.Key}
	var wg sync.WaitGroup
	for i, p := range doomed {
		wg.Go(func() {
			if !panicked.Call(i, func() { errs[i] = m.deleteOne(ctx, p, keys[i], &gate) }) {
				errs[i] = errDeletePanicked
			}
		})
	}
	wg.Wait()

	var failures []error
	for i, p := range doomed {
		err := errs[i]
		if err == nil {
			out.Deleted = append(out.Deleted, p)
			continue
		}
		// step 6: the pod's delete event will not come from this
		// call, so its key must not keep the owner waiting.
		tracker.DeletionObserved(o.Key, keys[i])
		switch {
		case err == errDeleteFenced:
			out.Fenced++
		case apierrors.IsNotFound(err):
			out.Gone = append(out.Gone, p)
		default:
			out.DeleteFailed = append(out.DeleteFailed, p)
			if err != errDeletePanicked {
				failures = append(failures, err)
			}
		}
	}
	m.Hooks.deleted(o.Key, pods, out.Victims, now)
	m.Hooks.repanic(o.Key, &panicked)
	if err := gate.refusal(); err != nil {
		failures = append(failures, err)
	}
	switch len(failures) {
	case 0:
		return out, nil
	case 1:
		return out, failures[0]
	}
	return out, errors.Join(failures...)
}

// errDeletePanicked marks a delete whose PodControl call panicked.
var errDeletePanicked = errors.New("reconcile: DeletePod panicked")

// errDeleteFenced marks a delete the fence refused; the refusal itself is
// the gate's, reported once.
var errDeleteFenced = errors.New("reconcile: delete refused by the fence")

// deleteOne deletes pod (key podKey), unless the fence refuses it.
func (m *Manager) deleteOne(ctx context.Context, pod *corev1.Pod, podKey string, gate *fenceGate) error {
	if gate.fence != nil && gate.allow("deleting pod "+podKey) != nil {
		return errDeleteFenced
	}
	return m.Pods.DeletePod(ctx, pod)
}
