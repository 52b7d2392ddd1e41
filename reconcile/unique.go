package reconcile

import (
	"hash/maphash"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// uniquePods returns active without nil pods and without later pods whose
// key was already seen. It returns active itself when there is nothing to
// drop; the result is only read. ManageReplicas calls it on every call
// (its callers' slices are theirs); Sync's manage step only before deleting
// (see manageListed).
func uniquePods(active []*corev1.Pod) []*corev1.Pod {
	if !mayRepeat(active) {
		return active // the common case, paid on every sync: no map
	}
	seen := make(map[podID]struct{}, len(active))
	clean := true
	for _, p := range active {
		if p == nil {
			clean = false
			continue
		}
		id := podID{p.Namespace, p.Name}
		if _, dup := seen[id]; dup {
			clean = false
			continue
		}
		seen[id] = struct{}{}
	}
	if clean {
		return active
	}
	out := make([]*corev1.Pod, 0, len(seen))
	clear(seen)
	for _, p := range active {
		if p == nil {
			continue
		}
		id := podID{p.Namespace, p.Name}
		if _, dup := seen[id]; dup {
			continue
		}
		seen[id] = struct{}{}
		out = append(out, p)
	}
	return out
}

// podID is a pod's key as a comparable value, without building the string.
type podID struct{ namespace, name string }

// keySeed seeds the hashes of mayRepeat.
var keySeed = maphash.MakeSeed()

// mayRepeat reports whether active might hold a nil pod or two pods with the
// same key. It compares sorted key hashes, 8 bytes per pod, instead of
// building a set; a false positive (a hash collision) only sends the caller
// to the exact check.
//
// It runs on every ManageReplicas call, where a plain map of every key was
// measured far slower (docs/design/sync.md#measurements-behind-the-code).
// Controller.Sync does not call it on every sync (manageListed).
func mayRepeat(active []*corev1.Pod) bool {
	if len(active) < 2 {
		return len(active) == 1 && active[0] == nil
	}
	hashes := make([]uint64, len(active))
	for i, p := range active {
		if p == nil {
			return true
		}
		hashes[i] = maphash.String(keySeed, p.Namespace)*31 + maphash.String(keySeed, p.Name)
	}
	slices.Sort(hashes)
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] {
			return true
		}
	}
	return false
}
