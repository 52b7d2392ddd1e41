package reconcile

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

// DefaultBurstReplicas is the most pods one ManageReplicas call creates, or
// deletes, when Manager.BurstReplicas is not set.
const DefaultBurstReplicas = 500

// Clock tells the Manager the time. Clocks from k8s.io/utils/clock satisfy
// it, as does [time.Now] wrapped in a type.
type Clock interface{ Now() time.Time }

// Manager creates and deletes an owner's pods so that the number of active
// pods approaches the desired number, keeping expectations right: upstream's
// manageReplicas (SPEC §9) plus the sync around it ([Manager.Sync]).
//
// The zero Manager (with Pods set) behaves as upstream: a private
// expectations Tracker on the Manager's clock, bursts of 500, slow-start
// creates from a batch of 1, the deletion ranking with deletion cost and
// logarithmic scale-down, counted (not tracked) creations, no hooks.
//
// A Manager is safe for concurrent use by multiple goroutines as long as
// no two of them work on the same owner key at once — the guarantee a
// workqueue gives. It must not be copied after first use, and its fields
// must not change while calls are in flight.
type Manager struct {
	// Pods creates and deletes pods. It is required as soon as a call has
	// to create or delete anything.
	Pods PodControl
	// Expectations records what the Manager asked for and has not yet
	// observed. Share it with the [Observer] that feeds it pod events.
	// Nil means a private Tracker on Clock, reachable through
	// [Manager.Tracker].
	Expectations *expectations.Tracker
	// BurstReplicas caps the creates, and separately the deletes, of one
	// call. <= 0 means DefaultBurstReplicas (500).
	BurstReplicas int
	// Clock is the time source: for the deletion ranking's logarithmic
	// buckets (Ranking.Now is always overwritten with Clock.Now()), for
	// the private Tracker, for Sync's status time and availability
	// requeue, and for the victims' age in Hooks. Nil means real time.
	Clock Clock
	// Ranking configures the choice of pods to delete ([podrank.ForDeletion]).
	// Its Now field is ignored: the Manager sets it from Clock. The zero
	// value is upstream's ranking.
	Ranking podrank.Options
	// SlowStart configures the create batches ([slowstart.Run]). The zero
	// value is upstream's: a first batch of 1, doubling, no cap.
	SlowStart slowstart.Options
	// TrackCreations makes the Manager name each new pod itself and expect
	// its creations by pod key (expectations.Tracker.ExpectCreationKeys)
	// instead of counting them: an add event then satisfies only the
	// round that created that very pod, once, so a late, duplicate or
	// foreign add event can neither satisfy nor corrupt a round. A failed
	// create (including AlreadyExists on a name clash) lowers its own key.
	//
	// A create that failed may still have happened (a timeout after the
	// API server stored the pod). The Manager remembers the names of failed
	// creates (except AlreadyExists) and uses them first in the owner's next
	// create round, unless the pod has shown up among the active pods by
	// then: if the pod exists, the retry meets AlreadyExists instead of
	// creating an extra pod. Such a retried create counts as done
	// (Outcome.AlreadyExisted): not an error, and its key stays expected
	// until its add event arrives (or the expectations expire). Call
	// [Manager.Forget] when an owner is deleted.
	//
	// Beyond upstream, off by default: upstream counts creations and lets
	// the API server generate names.
	TrackCreations bool
	// NameGenerator returns a pod name for the given prefix ("<owner
	// name>-") when TrackCreations is on. Nil means the API server's
	// scheme: the prefix, cut to 58 characters, plus five random characters
	// from "bcdfghjklmnpqrstvwxz2456789" (math/rand/v2). It may be called
	// concurrently by different owners' calls. Tests inject a
	// deterministic one.
	NameGenerator func(prefix string) string
	// Hooks receives metrics-style notifications. The zero value calls
	// nothing.
	Hooks Hooks

	once    sync.Once
	private *expectations.Tracker

	mu        sync.Mutex
	uncertain map[string][]string // owner key → names of failed tracked creates to retry
}

// Tracker returns the expectations Tracker the Manager uses:
// m.Expectations, or the private one made on first use when that is nil.
func (m *Manager) Tracker() *expectations.Tracker {
	if m.Expectations != nil {
		return m.Expectations
	}
	m.once.Do(func() {
		m.private = expectations.New(expectations.Options{Clock: m.Clock})
	})
	return m.private
}

func (m *Manager) now() time.Time {
	if m.Clock == nil {
		return time.Now()
	}
	return m.Clock.Now()
}

func (m *Manager) burst() int {
	if m.BurstReplicas <= 0 {
		return DefaultBurstReplicas
	}
	return m.BurstReplicas
}

// Outcome reports what one ManageReplicas call did, for logs, events and
// tests; the package itself does not log. Pods in it are the caller's
// pointers (victims) or the PodControl's returns (created pods); the slices
// are new and belong to the caller.
type Outcome struct {
	// Diff is the number of active pods (nil and duplicate entries of the
	// active slice not counted) minus the desired replicas: < 0 means pods
	// were missing, > 0 surplus. It is 0 when the call returned an error
	// before looking at the pods.
	Diff int
	// Expected is how many creations (Diff < 0) or deletions (Diff > 0)
	// the call asked for: |Diff| capped at the burst. For deletions it
	// counts every chosen victim, including NotOwned ones.
	Expected int

	// Created holds the pods CreatePod returned (or, when it returned a
	// nil pod without error, the pod that was sent), in call order.
	Created []*corev1.Pod
	// NamespaceTerminating counts creates that failed because the
	// namespace is being deleted. As upstream, they count as
	// successes: no error, the batch continues, expectations not lowered.
	NamespaceTerminating int
	// CreateFailed counts creates that failed otherwise; each was lowered
	// in the expectations.
	CreateFailed int
	// Skipped counts creates never attempted because a batch failed (or
	// ctx ended between batches); each was lowered in the expectations.
	// Upstream's "skipped" is CreateFailed + Skipped.
	Skipped int
	// Batches lists the sizes of the slow-start batches that ran, in order.
	Batches []int
	// Names holds the names of the new pods when TrackCreations is on
	// (Expected of them, in call order), nil otherwise. The first Retried
	// of them are names of earlier failed creates, tried again.
	Names []string
	// Retried is how many of Names are retried names (the first ones).
	Retried int
	// AlreadyExisted counts retried creates that met AlreadyExists: the
	// earlier create had succeeded after all. They count as successes (no
	// error, key still expected, not in Created).
	AlreadyExisted int

	// Victims are the pods chosen for deletion, in deletion-rank order
	// (most deletable first; input order when every active pod goes).
	Victims []*corev1.Pod
	// NotOwned are the victims that were not deleted because their
	// controller ownerRef names another object (a different UID) — a safety
	// check beyond upstream, which deletes what it is given. They are not
	// expected. Orphans (no controller ownerRef) are not refused: the
	// caller passed them as the owner's pods, as upstream's claiming does.
	NotOwned []*corev1.Pod
	// Deleted are the victims whose DeletePod succeeded.
	Deleted []*corev1.Pod
	// Gone are the victims whose DeletePod returned NotFound: already gone,
	// lowered in the expectations, not an error.
	Gone []*corev1.Pod
	// DeleteFailed are the victims whose DeletePod failed otherwise; each
	// was lowered in the expectations through its pod key.
	DeleteFailed []*corev1.Pod
}

// ManageReplicas creates or deletes pods so that the owner's active pods
// approach owner.Replicas (SPEC §9). active are the owner's active pods
// (claimed ); related are the pods whose nodes count towards
// the deletion rank (R-7.1, R-7.2: for a ReplicaSet, the pods of every
// ReplicaSet with the same controller; nil for a bare owner).
//
// With d = active pods − owner.Replicas:
//   - d < 0: n = min(−d, burst) creations are expected (ExpectCreations, or
//     ExpectCreationKeys with TrackCreations) before the first create, and
//     made in slow-start batches. A NamespaceTerminating failure counts as a
//     success; other failures and the creates never attempted are lowered.
//   - d > 0: n = min(d, burst) victims are chosen with [podrank.ForDeletion]
//     (ranks from related, Now from Clock), their keys expected
//     (ExpectDeletions) before any call, and all deleted concurrently. Every
//     failed delete is lowered through its pod key; NotFound is not an error.
//   - d == 0: nothing happens; expectations are untouched.
//
// The returned error is nil when everything succeeded. Otherwise it is the
// one failure of the call, or, when several calls failed, [errors.Join] of
// all of them in call order (creates: index order; deletes: rank order) —
// upstream returns one of them at random. An error is returned without any
// call or expectation change when owner is invalid (no Object, empty Key,
// negative Replicas), when pods must be created and the template is nil or
// has no labels, when a PodControl is needed and Pods is nil, and when ctx
// is already done.
//
// Beyond upstream: nil and duplicate (same [PodKey]) entries of active are
// ignored; victims whose controller ownerRef names another owner are not
// deleted (Outcome.NotOwned); the caller's slices and pods are never
// modified. ctx reaches every PodControl call. A panic in PodControl is
// re-raised in the caller's goroutine after every started call has
// returned and the expectations have been lowered for the failed calls.
func (m *Manager) ManageReplicas(ctx context.Context, owner Owner, active, related []*corev1.Pod) (Outcome, error) {
	if err := owner.validate(); err != nil {
		return Outcome{}, err
	}
	pods := uniquePods(active)
	diff := len(pods) - int(owner.Replicas)
	out := Outcome{Diff: diff}
	if diff == 0 {
		return out, nil
	}
	if m.Pods == nil {
		return out, fmt.Errorf("reconcile: owner %s: Manager.Pods is nil", owner.Key)
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("reconcile: owner %s: %w", owner.Key, err)
	}
	if diff < 0 {
		return m.createPods(ctx, &owner, min(-diff, m.burst()), pods, out)
	}
	return m.deletePods(ctx, &owner, pods, related, min(diff, m.burst()), out)
}

// uniquePods returns active without nil pods and without later pods whose
// key was already seen. It returns active itself when there is nothing to
// drop; the result is only read.
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

// callPanic remembers a panic raised by a PodControl call so that it can be
// re-raised in the caller's goroutine.
type callPanic struct {
	value any
	ok    bool
}
