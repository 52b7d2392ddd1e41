package reconcile

import (
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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
				m.keepUncertain(o.Key, nil, names[:retried])
				return nil, 0, ownerErrorf(o.Key, "NameGenerator returned %d duplicate names in a row (last %q)", nameAttempts, name)
			}
			name = gen(prefix)
			if name == "" {
				m.keepUncertain(o.Key, nil, names[:retried])
				return nil, 0, ownerErrorf(o.Key, "NameGenerator returned an empty name")
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
	u := m.uncertain[o.Key]
	u.names = keep
	m.setUncertain(o.Key, u)
	return take
}

// keepUncertain remembers names of o's creates that failed in a way that may
// hide a success, to be retried under the same names: fresh ones, and
// retried ones, which a create may have been sent under twice. At most the
// burst of names is kept per owner; older ones are dropped first.
func (m *Manager) keepUncertain(key string, fresh, retried []string) {
	if len(fresh)+len(retried) == 0 {
		return
	}
	names := append(slices.Clip(retried), fresh...)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepUncertain()
	u := m.uncertain[key]
	all := append(slices.Clip(u.names), names...)
	if over := len(all) - m.burst(); over > 0 {
		all = all[over:]
	}
	resent := make(map[string]bool, len(retried))
	for _, name := range all {
		if u.resent[name] || slices.Contains(retried, name) {
			resent[name] = true
		}
	}
	u.names, u.resent, u.at = all, resent, m.now()
	m.setUncertain(key, u)
}

// uncertainNames are an owner's failed creates' names, those of them a
// create may have been sent under more than once, the UIDs of the pods
// that retries under such names made, and when the last name was kept.
type uncertainNames struct {
	names  []string
	resent map[string]bool
	made   map[string]types.UID // pod name → the UID its retried create returned
	at     time.Time
}

// setUncertain stores u for key, or drops the entry when it holds nothing.
// m.mu is held.
func (m *Manager) setUncertain(key string, u uncertainNames) {
	if len(u.names) == 0 && len(u.made) == 0 {
		delete(m.uncertain, key)
		return
	}
	if m.uncertain == nil {
		m.uncertain = make(map[string]uncertainNames)
	}
	m.uncertain[key] = u
}

// retriedMade records that a retried create under pod's name made pod: until
// pod's own add event arrives, an add event of another pod of that name is
// an earlier create's, whose response was lost and which was deleted since
// (the retry found the name free), and must not settle the retried key.
func (m *Manager) retriedMade(key string, pod *corev1.Pod) {
	if pod == nil || pod.UID == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.uncertain[key]
	if u.made == nil {
		u.made = make(map[string]types.UID)
	}
	u.made[pod.Name] = pod.UID
	if u.at.IsZero() {
		u.at = m.now()
	}
	m.setUncertain(key, u)
}

// earlierIncarnation reports whether an add event of pod is an earlier
// create's under a name a retry has reused (see retriedMade); the add of
// the retry's own pod ends the watch for that name.
func (m *Manager) earlierIncarnation(key string, pod *corev1.Pod) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.uncertain[key]
	uid, ok := u.made[pod.Name]
	if !ok {
		return false
	}
	if uid != pod.UID {
		return true
	}
	delete(u.made, pod.Name)
	m.setUncertain(key, u)
	return false
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
	if i < 0 || u.resent[pod.Name] {
		// A name sent twice: the event may be the first pod's, which a
		// retry found gone and made anew under the same name.
		return
	}
	u.names = slices.Delete(slices.Clone(u.names), i, i+1)
	m.setUncertain(key, u)
}

// hasUncertain reports whether the Manager remembers names for key.
func (m *Manager) hasUncertain(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.uncertain[key].names)+len(m.uncertain[key].made) > 0
}
