package reconcile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// nameAlphabet is the alphabet of the API server's generateName suffixes:
// consonants and digits that cannot spell words.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

const (
	nameSuffixLen   = 5
	maxGeneratedLen = 63 // the API server's limit for generated names
	nameAttempts    = 8  // tries per name before a duplicate is an error
)

// randomName returns prefix, cut to leave room for the suffix as the API
// server does, followed by five random characters of nameAlphabet.
func randomName(prefix string) string {
	if limit := maxGeneratedLen - nameSuffixLen; len(prefix) > limit {
		prefix = prefix[:limit]
	}
	var b [nameSuffixLen]byte
	for i := range b {
		b[i] = nameAlphabet[rand.IntN(len(nameAlphabet))]
	}
	return prefix + string(b[:])
}

// podNames returns the n names of o's next pods under TrackCreations: first
// the names of earlier failed creates that may have succeeded unseen
// (retried, fewer than n, none of them among the active pods), then fresh
// ones from m.NameGenerator (or randomName). A generator that returns ""
// or keeps returning duplicates is an error; the retried names are then
// kept for the next call.
func (m *Manager) podNames(o *Owner, n int, active []*corev1.Pod) (names []string, retried int, err error) {
	names = m.takeUncertain(o, n, active)
	retried = len(names)
	gen := m.NameGenerator
	if gen == nil {
		gen = randomName
	}
	prefix := namePrefix(o.Object.GetName())
	seen := make(map[string]struct{}, n)
	for _, name := range names {
		seen[name] = struct{}{}
	}
	for len(names) < n {
		name := ""
		for attempt := 0; ; attempt++ {
			if attempt == nameAttempts {
				m.keepUncertain(o.Key, names[:retried])
				return nil, 0, fmt.Errorf("reconcile: owner %s: NameGenerator returned %d duplicate names in a row (last %q)", o.Key, nameAttempts, name)
			}
			name = gen(prefix)
			if name == "" {
				m.keepUncertain(o.Key, names[:retried])
				return nil, 0, fmt.Errorf("reconcile: owner %s: NameGenerator returned an empty name", o.Key)
			}
			if _, dup := seen[name]; !dup {
				break
			}
		}
		seen[name] = struct{}{}
		names = append(names, name)
	}
	return names, retried, nil
}

// takeUncertain removes and returns up to n of o's uncertain names whose
// pods are not among active (those have been observed: nothing to retry).
func (m *Manager) takeUncertain(o *Owner, n int, active []*corev1.Pod) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepUncertain()
	pending := m.uncertain[o.Key].names
	if len(pending) == 0 {
		return nil
	}
	seen := make(map[string]struct{}, len(active))
	for _, p := range active {
		seen[PodKey(p)] = struct{}{}
	}
	ns := o.Object.GetNamespace()
	var take, keep []string
	for _, name := range pending {
		switch {
		case hasKey(seen, ns+"/"+name):
			// observed since: it succeeded
		case len(take) < n:
			take = append(take, name)
		default:
			keep = append(keep, name)
		}
	}
	if len(keep) == 0 {
		delete(m.uncertain, o.Key)
	} else {
		m.uncertain[o.Key] = uncertainNames{names: keep, at: m.uncertain[o.Key].at}
	}
	return take
}

// keepUncertain remembers names of o's creates that failed in a way that may
// hide a success, to be retried under the same names. At most the burst of
// names is kept per owner; older ones are dropped first.
func (m *Manager) keepUncertain(key string, names []string) {
	if len(names) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepUncertain()
	if m.uncertain == nil {
		m.uncertain = make(map[string]uncertainNames)
	}
	all := append(slices.Clip(m.uncertain[key].names), names...)
	if over := len(all) - m.burst(); over > 0 {
		all = all[over:]
	}
	m.uncertain[key] = uncertainNames{names: all, at: m.now()}
}

// uncertainNames are an owner's failed creates' names and when the last of
// them was kept.
type uncertainNames struct {
	names []string
	at    time.Time
}

// uncertainNamesTTL is how long a Manager keeps the names of an owner's
// failed creates for a retry (TrackCreations) after the last of them
// failed: long enough for a create that did happen to show up in the cache
// (it is expectations.DefaultTTL), and short enough that the names of a
// deleted owner go without a call to [Manager.Forget].
const uncertainNamesTTL = expectations.DefaultTTL

// sweepUncertain drops, at most once per uncertainNamesTTL, the names kept
// longer than that. m.mu is held.
func (m *Manager) sweepUncertain() {
	if len(m.uncertain) == 0 {
		return
	}
	now := m.now()
	if now.Sub(m.swept) < uncertainNamesTTL && !m.swept.IsZero() {
		return
	}
	m.swept = now
	for key, u := range m.uncertain {
		if now.Sub(u.at) >= uncertainNamesTTL {
			delete(m.uncertain, key)
		}
	}
}

// Forget drops what the Manager remembers about the owner key: the names of
// failed creates it would retry under TrackCreations. Calling it when the
// owner is deleted frees them at once ([Controller] does); without it they
// go five minutes after the last failure, at the next call that sweeps
// (at most a burst of names per owner meanwhile). It does not touch the
// expectations.
func (m *Manager) Forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.uncertain, key)
}

func hasKey(set map[string]struct{}, k string) bool {
	_, ok := set[k]
	return ok
}

// observed drops pod's name from the names of key's failed creates: an
// informer event for the pod proves that its create happened, so retrying
// the name could only meet AlreadyExists on it — or on its terminating
// remains, whose add event will never come again, leaving the retried key
// expected until the expectations expire.
func (m *Manager) observed(key string, pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.uncertain[key]
	i := slices.Index(u.names, pod.Name)
	if i < 0 {
		return
	}
	if u.names = slices.Delete(slices.Clone(u.names), i, i+1); len(u.names) == 0 {
		delete(m.uncertain, key)
	} else {
		m.uncertain[key] = u
	}
}

// hasUncertain reports whether the Manager remembers names for key.
func (m *Manager) hasUncertain(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.uncertain[key].names) > 0
}
