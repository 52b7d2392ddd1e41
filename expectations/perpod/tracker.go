package perpod

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// Never, as CreationExpiry or DeletionExpiry, makes that kind of expected
// pod block its key until it is observed or forgotten: time plays no part.
// One missed event then stalls the key, so pair it with [Tracker.Observe],
// which looks the pods up instead of waiting for their events.
const Never = time.Duration(math.MaxInt64)

// Options configures a [Tracker]. The zero Options give upstream's
// 5-minute timeout to both kinds of expected pod.
//
// When an expected pod stops blocking its key is one decision, per kind:
// CreationExpiry after its creation was expected, DeletionExpiry after its
// deletion was. Each pod is timed from its own Expect call.
type Options struct {
	// CreationExpiry is how long an expected creation blocks its key if
	// the pod is never observed. Zero or negative means
	// expectations.DefaultTTL, so that no arithmetic slip can stall a key
	// for good; [Never] is the explicit way to wait however long it takes.
	CreationExpiry time.Duration

	// DeletionExpiry is CreationExpiry for expected deletions.
	DeletionExpiry time.Duration

	// Clock supplies the time. Nil means the real clock (time.Now).
	Clock expectations.Clock

	// Hooks are called on notable transitions, for metrics; the zero Hooks
	// call nothing. Resolved fires once per round, the time from an Expect
	// call that finds nothing pending under its key until the first
	// Satisfied call that finds nothing pending again, with Fulfilled, or
	// Expired when an expected pod ran out of time during the round.
	Hooks expectations.Hooks
}

// PodLookup finds a pod by its key ("namespace/name"), in a cache or
// through a client: the pod, or nil and no error when there is none. An
// error means the lookup could not tell. It must not modify the pod, and
// must be safe for concurrent use if Observe is called concurrently. The
// adapters build one from a lister or a controller-runtime reader.
type PodLookup func(podKey string) (*corev1.Pod, error)

// Tracker records, per key (an owner, or one pod group of an owner:
// "namespace/name/group"), the pod keys ("namespace/name") whose creation
// or deletion the controller expects and has not yet observed, one pod at a
// time: an operator's scale expectations. A key is satisfied when none of
// its expected pods is pending; an expected pod stops being pending when it
// is observed, by an event ([Tracker.CreationObserved],
// [Tracker.DeletionObserved]) or a lookup ([Tracker.Observe]), or when its
// kind's expiry ([Options]) has passed since it was expected.
//
// Unlike expectations.Tracker, which works in rounds that each Set or
// Expect call replaces, expected pods accumulate under a key, creations
// and deletions side by side, and nothing is counted: only the pod keys
// given settle what was expected, so a duplicate or late event, or a pod
// made by someone else, changes nothing.
//
// The zero Tracker is ready to use, with the real clock and the default
// expiries; use [New] for other Options. A Tracker must not be copied after
// first use. Any string, including "", is a valid key or pod key.
//
// A Tracker is safe for concurrent use by any number of goroutines. One
// mutex guards its records; no method holds it while calling the Clock, a
// lookup or a hook.
type Tracker struct {
	opts Options

	mu      sync.Mutex
	records map[string]*record // nil until the first Expect call
}

// The two kinds of expected pod, indexes of record.pods.
const (
	creation = iota
	deletion
)

// record is one key's expected pods, per kind, each with the time it was
// expected.
type record struct {
	pods [2]map[string]time.Time // [creation], [deletion]

	since    time.Time // when the current round started
	expired  bool      // an expected pod of this round ran out of time
	resolved bool      // Hooks.Resolved has fired for this round
}

func (r *record) empty() bool { return len(r.pods[creation]) == 0 && len(r.pods[deletion]) == 0 }

// New returns a Tracker configured by opts, which it copies. It starts no
// goroutines.
func New(opts Options) *Tracker {
	return &Tracker{opts: opts}
}

func (t *Tracker) now() time.Time {
	if t.opts.Clock == nil {
		return time.Now()
	}
	return t.opts.Clock.Now()
}

// expiry is the effective expiry of a kind configured as d.
func expiry(d time.Duration) time.Duration {
	if d <= 0 {
		return expectations.DefaultTTL
	}
	return d
}

// prune forgets, at now, the expected pods past their kind's expiry,
// noting in the round that some expired. t.mu must be held.
func (t *Tracker) prune(r *record, now time.Time) {
	limits := [2]time.Duration{expiry(t.opts.CreationExpiry), expiry(t.opts.DeletionExpiry)}
	for kind, pods := range r.pods {
		for podKey, at := range pods {
			if now.Sub(at) > limits[kind] {
				delete(pods, podKey)
				r.expired = true
			}
		}
	}
}

// expect records podKey as an expected pod of kind under key.
func (t *Tracker) expect(key, podKey string, kind int) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[key]
	if r == nil {
		if t.records == nil {
			t.records = make(map[string]*record)
		}
		r = &record{}
		t.records[key] = r
	}
	t.prune(r, now)
	if r.empty() {
		r.since, r.expired, r.resolved = now, false, false
	}
	if r.pods[kind] == nil {
		r.pods[kind] = make(map[string]time.Time, 1)
	}
	r.pods[kind][podKey] = now
}

// ExpectCreation records that the controller is creating the pod podKey
// ("namespace/name") and expects to observe it under key: call it just
// before or after each create. Other pods expected under key, of either
// kind, stay expected; podKey expected again is timed afresh. A key
// without a record is fine.
func (t *Tracker) ExpectCreation(key, podKey string) {
	t.expect(key, podKey, creation)
}

// ExpectDeletion records that the controller is deleting the pod podKey
// ("namespace/name") and expects to observe it gone under key, as
// ExpectCreation does for a creation.
func (t *Tracker) ExpectDeletion(key, podKey string) {
	t.expect(key, podKey, deletion)
}

// CreationObserved records that the pod podKey was seen created (an add
// event), or that its create failed: it settles podKey's expected
// creation under key, if there is one, and changes nothing otherwise. It
// does not allocate.
func (t *Tracker) CreationObserved(key, podKey string) {
	t.settle(key, podKey, creation)
}

// DeletionObserved records that the pod podKey was seen deleted or
// terminating, or that its delete failed: it settles podKey's expected
// deletion under key, if there is one, and changes nothing otherwise. It
// does not allocate.
func (t *Tracker) DeletionObserved(key, podKey string) {
	t.settle(key, podKey, deletion)
}

// settle removes podKey from key's expected pods of kind and reports
// whether it was there.
func (t *Tracker) settle(key, podKey string, kind int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[key]
	if r == nil {
		return false
	}
	if _, ok := r.pods[kind][podKey]; !ok {
		return false
	}
	delete(r.pods[kind], podKey)
	return true
}

// Pending returns the pod keys whose creation and whose deletion key still
// expects, each sorted, nil when there are none or key has no record.
// Pods past their kind's expiry are not pending. It reads the clock once.
func (t *Tracker) Pending(key string) (creations, deletions []string) {
	now := t.now()
	t.mu.Lock()
	if r := t.records[key]; r != nil {
		t.prune(r, now)
		creations = keysOf(r.pods[creation])
		deletions = keysOf(r.pods[deletion])
	}
	t.mu.Unlock()
	slices.Sort(creations)
	slices.Sort(deletions)
	return creations, deletions
}

// keysOf returns pods' keys in no order, nil when there are none.
func keysOf(pods map[string]time.Time) []string {
	if len(pods) == 0 {
		return nil
	}
	return slices.AppendSeq(make([]string, 0, len(pods)), maps.Keys(pods))
}

// Satisfied reports whether key has no pending expected pod: none was
// expected, each was observed, or each ran out of time. The first call
// that finds a round satisfied calls Hooks.Resolved. It reads the clock
// once.
func (t *Tracker) Satisfied(key string) bool {
	now := t.now()
	t.mu.Lock()
	r := t.records[key]
	if r == nil {
		t.mu.Unlock()
		return true
	}
	t.prune(r, now)
	satisfied := r.empty()
	fire := satisfied && !r.resolved && t.opts.Hooks.Resolved != nil
	resolution := expectations.Fulfilled
	if r.expired {
		resolution = expectations.Expired
	}
	if satisfied {
		r.resolved = true
	}
	age := now.Sub(r.since)
	t.mu.Unlock()
	if fire {
		t.opts.Hooks.Resolved(key, resolution, age)
	}
	return satisfied
}

// Observe looks up each pod key that key still expects (Pending) and
// records what it finds, for a controller that checks its expectations
// against a cache or a client instead of (or as well as) feeding events to
// the Tracker: a pod that exists settles its expected creation; a pod that
// is gone, or terminating (it has a deletion timestamp, as the event
// handlers treat it), settles its expected deletion. It returns how many
// expectations it settled.
//
// A lookup error leaves that pod pending; Observe goes on with the other
// keys and returns the errors joined. A nil lookup is an error. The lookup
// is called without the Tracker's lock held, once per pending pod key, and
// may itself use the Tracker. A pod found under an expected deletion's key
// is taken as that pod even if it is a new pod of the same name: compare
// UIDs in the lookup (return nil for a different UID) where names are
// reused.
func (t *Tracker) Observe(key string, lookup PodLookup) (observed int, err error) {
	if lookup == nil {
		return 0, errors.New("perpod: Observe needs a lookup")
	}
	creationKeys, deletionKeys := t.Pending(key)
	var errs []error
	for _, podKey := range creationKeys {
		pod, err := lookup(podKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("perpod: looking up pod %s: %w", podKey, err))
			continue
		}
		if pod != nil && t.settle(key, podKey, creation) {
			observed++
		}
	}
	for _, podKey := range deletionKeys {
		pod, err := lookup(podKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("perpod: looking up pod %s: %w", podKey, err))
			continue
		}
		gone := pod == nil || pod.DeletionTimestamp != nil
		if gone && t.settle(key, podKey, deletion) {
			observed++
		}
	}
	return observed, errors.Join(errs...)
}

// Delete forgets key and everything expected under it. Afterwards key is
// satisfied and observations for it are no-ops until the next Expect call.
func (t *Tracker) Delete(key string) {
	t.mu.Lock()
	delete(t.records, key)
	t.mu.Unlock()
}

// KeysWithPrefix returns the keys that have a record and start with prefix,
// sorted; nil when there are none. With keys built as owner key plus a
// suffix per pod group ("namespace/name/group"), the owner key and its
// separator list every group of one owner; "" lists every key. A key keeps
// its record, satisfied or not, until Delete or DeletePrefix. It scans
// every record: O(keys).
func (t *Tracker) KeysWithPrefix(prefix string) []string {
	var keys []string
	t.mu.Lock()
	for k := range t.records {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	t.mu.Unlock()
	slices.Sort(keys)
	return keys
}

// DeletePrefix is Delete for every key that starts with prefix ("" for
// all), in one critical section, and returns how many it forgot: what a
// controller calls when an owner with one key per pod group goes away. End
// the prefix with the separator ("namespace/name/"), so that owner "a"
// does not take owner "ab" with it. It scans every record: O(keys).
func (t *Tracker) DeletePrefix(prefix string) (deleted int) {
	t.mu.Lock()
	for k := range t.records {
		if strings.HasPrefix(k, prefix) {
			delete(t.records, k)
			deleted++
		}
	}
	t.mu.Unlock()
	return deleted
}
