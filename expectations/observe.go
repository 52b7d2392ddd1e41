package expectations

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// PodLookup finds a pod by its key ("namespace/name"), in a cache or
// through a client: the pod, or nil and no error when there is none. An
// error means the lookup could not tell. The adapters build one from a
// lister or a controller-runtime reader.
type PodLookup func(podKey string) (*corev1.Pod, error)

// Observe looks up each pod key that key still expects (PendingKeys) and
// records what it finds, for a controller that checks its expectations
// against a cache or a client instead of (or as well as) feeding events to
// the Tracker: a pod that exists settles its expected creation
// (CreationObservedKey); a pod that is gone, or terminating (it has a
// deletion timestamp, which is how the event handlers treat it too), settles
// its expected deletion (DeletionObserved). It returns how many expectations
// it settled.
//
// A lookup error leaves that pod's expectation pending; Observe goes on
// with the other keys and returns the errors joined. The lookup is called
// without the Tracker's lock held, once per pending pod key, and may itself
// use the Tracker. A pod found under an expected deletion's key is taken as
// that pod even if it is a new pod of the same name: compare UIDs in the
// lookup (return nil for a different UID) where names are reused.
// Safe for concurrent use.
func (t *Tracker) Observe(key string, lookup PodLookup) (observed int, err error) {
	if lookup == nil {
		return 0, errors.New("expectations: Observe needs a lookup")
	}
	creations, deletions := t.PendingKeys(key)
	var errs []error
	for _, podKey := range creations {
		pod, err := lookup(podKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("expectations: looking up pod %s: %w", podKey, err))
			continue
		}
		if pod != nil && t.creationObserved(key, podKey) {
			observed++
		}
	}
	for _, podKey := range deletions {
		pod, err := lookup(podKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("expectations: looking up pod %s: %w", podKey, err))
			continue
		}
		if (pod == nil || pod.DeletionTimestamp != nil) && t.deletionObserved(key, podKey) {
			observed++
		}
	}
	return observed, errors.Join(errs...)
}

// creationObserved settles the tracked creation of podKey under key, if it
// is still expected, and reports whether it did. Counted creations are left
// alone: a found pod cannot tell which of them it settles.
func (t *Tracker) creationObserved(key, podKey string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[key]
	if r == nil || !r.trackAdds {
		return false
	}
	if _, ok := r.addKeys[podKey]; !ok {
		return false
	}
	delete(r.addKeys, podKey)
	r.adds--
	return true
}
