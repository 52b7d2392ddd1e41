package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/rv"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/status"
)

// ErrCreationsStopped marks the error of a [Controller.Sync] whose
// creation breaker is open (docs/rules.md, beyond upstream): pods
// the Controller created for the owner did not become part of its active
// pods — they did not match the owner's selector as the API server
// returned them, or never appeared in the pod cache — so it stopped
// creating pods for that owner instead of creating them again without end.
// errors.Is(err, ErrTerminal) holds too. Deleting pods still works. The
// breaker closes when the owner's generation changes (any spec change),
// when one of those pods is seen among the owner's active pods, and when
// the Controller restarts.
var ErrCreationsStopped = errors.New("reconcile: creations stopped")

// strikeCause is why a created pod did not become one of the owner's
// active pods.
type strikeCause uint8

const (
	// causeNotSelected: the owner's selector does not match the pod as
	// the API server returned it, or as the cache showed it before it was
	// ever counted (it was released).
	causeNotSelected strikeCause = iota + 1
	// causeNotObserved: the pod cache passed the create, or the creation
	// wait ended, and the pod is not in it.
	causeNotObserved
)

// stoppedError is the error of an open breaker.
type stoppedError struct {
	key   string
	cause strikeCause
	count int // pods that did not become active
}

func (e *stoppedError) Error() string {
	switch e.cause {
	case causeNotSelected:
		return fmt.Sprintf("reconcile: owner %s: stopped creating pods: %d pod(s) it created did not match its selector as the API server returned them "+
			"(a label the pod client stamps that the selector excludes, or a mutating webhook that changes labels); fix that, then change the spec", e.key, e.count)
	default:
		return fmt.Sprintf("reconcile: owner %s: stopped creating pods: %d pod(s) it created never appeared in its pod cache "+
			"(a cache filter the created pods do not meet, e.g. owned-only labels that differ from the labels the pod client stamps); fix that, then change the spec or restart", e.key, e.count)
	}
}

// Is makes errors.Is(err, ErrCreationsStopped) and errors.Is(err,
// ErrTerminal) hold.
func (e *stoppedError) Is(target error) bool {
	return target == ErrCreationsStopped || target == ErrTerminal
}

// ConditionReason names the cause in the failure condition (package
// status reads it).
func (e *stoppedError) ConditionReason() string {
	if e.cause == causeNotSelected {
		return status.CreatedPodsNotSelected
	}
	return status.CreatedPodsNotObserved
}

// createdPod is a pod the Controller created and has not yet seen among
// the owner's active pods.
type createdPod struct {
	pod *corev1.Pod // as the create returned it
	at  time.Time   // when the create returned
}

// ledger is the breaker's record of one owner incarnation at one
// generation.
type ledger struct {
	uid        types.UID
	generation int64
	pending    map[types.UID]createdPod  // created, not yet seen active
	struck     map[types.UID]strikeCause // created, never seen by the cache
	open       *stoppedError             // non-nil while creations are stopped
}

// breaker is a Controller's creation breaker: per owner key, the
// pods it created that have not yet been seen among the owner's active
// pods, those that never were, and the controlled pods that left the pod
// cache without a deletion timestamp. One mutex guards it all; every
// method is safe for concurrent use.
type breaker struct {
	mu       sync.Mutex
	owners   map[string]*ledger
	vanished map[string]map[types.UID]vanishedPod
}

// vanishedPod is a controlled pod out of the pod cache's view, to be read
// live before it is replaced.
type vanishedPod struct {
	pod *corev1.Pod
	// created: a pod the Controller created and never saw in the cache.
	created bool
	// overdue: such a pod whose creation wait has passed, so a cache
	// without versions should show it by now.
	overdue bool
}

// ledgerLocked returns the ledger of key for owner, new when the owner's
// UID or generation changed.
func (b *breaker) ledgerLocked(key string, owner metav1.Object) *ledger {
	l := b.owners[key]
	if l != nil && l.uid == owner.GetUID() && l.generation == owner.GetGeneration() {
		return l
	}
	if b.owners == nil {
		b.owners = make(map[string]*ledger)
	}
	l = &ledger{uid: owner.GetUID(), generation: owner.GetGeneration()}
	b.owners[key] = l
	return l
}

// created records the pods a sync created for owner.
func (b *breaker) created(key string, owner metav1.Object, pods []*corev1.Pod, now time.Time) {
	if len(pods) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.ledgerLocked(key, owner)
	for _, p := range pods {
		if p == nil || p.UID == "" {
			continue // nothing to recognize it by
		}
		if l.pending == nil {
			l.pending = make(map[types.UID]createdPod)
		}
		l.pending[p.UID] = createdPod{pod: p, at: now}
	}
}

// trip opens the breaker of key for owner with err, and reports whether
// it was closed before.
func (b *breaker) trip(key string, owner metav1.Object, err *stoppedError) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.ledgerLocked(key, owner)
	opened = l.open == nil
	l.open = err
	return opened
}

// settle updates the ledger of key from one sync's view — listed, every
// pod the sync read; active and released, the claim's result — and
// returns the open breaker's error, or nil. A pending pod seen active
// closes the breaker and clears every strike; one listed but not active
// (terminating, finished), or released, left for reasons outside the
// Controller and is dropped; one missing from the
// listing although the cache has passed its create (cacheRV), or the
// creation wait has ended, is read live before it is replaced when live
// (the PodClient is a [PodGetter]; recheckVanished strikes it if it
// exists), and forgotten otherwise. The breaker opens
// when the strikes reach the bound: max(2, min(replicas, burst)); opened
// reports that this call opened it.
func (b *breaker) settle(key string, owner metav1.Object, listed, active, released []*corev1.Pod, cacheRV string, now time.Time, wait time.Duration, replicas, burst int, live bool) (stopped *stoppedError, opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.owners[key]
	if l == nil || (len(l.pending) == 0 && len(l.struck) == 0 && l.open == nil) {
		return nil, false
	}
	l = b.ledgerLocked(key, owner)
	if len(l.pending) > 0 || len(l.struck) > 0 {
		for _, p := range active {
			_, wasPending := l.pending[p.UID]
			_, wasStruck := l.struck[p.UID]
			if wasPending || wasStruck {
				// The pipeline works: a creation became active.
				delete(l.pending, p.UID)
				l.struck, l.open = nil, nil
			}
		}
	}
	for _, p := range released {
		// Released because its labels changed after it was created: an
		// outside actor's doing (the create itself was checked), which
		// upstream would replace too.
		delete(l.pending, p.UID)
	}
	if len(l.pending) > 0 {
		for _, p := range listed {
			if p == nil {
				continue
			}
			if _, ok := l.pending[p.UID]; ok && !podrank.IsActive(p) {
				delete(l.pending, p.UID) // terminating or finished: not ours to explain
			}
		}
	}
	if len(l.pending) > 0 {
		seen := make(map[types.UID]bool, len(listed))
		for _, p := range listed {
			if p != nil {
				seen[p.UID] = true
			}
		}
		for uid, c := range l.pending {
			if seen[uid] || !invisible(c, cacheRV, now, wait) {
				continue
			}
			delete(l.pending, uid)
			if live {
				// Read live before it is replaced: gone, it left for
				// reasons outside the Controller (its deletion event may
				// still be on its way); there and stamped, the cache
				// cannot see it (recheckVanished, unseen).
				b.vanishedLocked(key, vanishedPod{pod: c.pod, created: true, overdue: cacheRV == ""})
			}
			// Without a live read a pod the cache does not show cannot be
			// told from one deleted behind the Controller's back whose
			// deletion event was lost: no strike.
		}
	}
	bound := strikeBound(replicas, burst)
	switch {
	case l.open == nil && len(l.struck) >= bound:
		l.open = &stoppedError{key: key, cause: causeNotObserved, count: len(l.struck)}
		opened = true
	case l.open != nil && l.open.cause == causeNotObserved && len(l.struck) < bound && len(l.struck) < l.open.count:
		// Strikes withdrawn: the deletion events of pods taken for
		// invisible came late. The evidence is gone, and so is the stop.
		l.open = nil
	}
	if l.open == nil && len(l.pending) == 0 && len(l.struck) == 0 {
		delete(b.owners, key) // nothing left to explain
	}
	return l.open, opened
}

// strikeBound is how many created pods may fail to become active, with no
// creation seen active since, before the breaker opens: every pod of one
// round (replicas, at most a burst) may be late or lost, but never two
// rounds' worth on a cache that shows what the Controller creates.
func strikeBound(replicas, burst int) int {
	return max(2, min(replicas, burst))
}

// invisible reports whether pending pod c should be in a cache at cacheRV
// by now: the cache has passed its create, or (without comparable
// versions) the creation wait has ended.
func invisible(c createdPod, cacheRV string, now time.Time, wait time.Duration) bool {
	if created := c.pod.ResourceVersion; cacheRV != "" && created != "" {
		if cmp, err := rv.Compare(cacheRV, created); err == nil {
			return cmp >= 0
		}
	}
	return now.Sub(c.at) >= wait
}

// strikeExisting strikes pods the Controller created, never saw in its
// cache, and found live, and opens the breaker of key for owner
// when the strikes reach the bound; a pod seen active later withdraws
// every strike. It reports whether this call opened the breaker.
func (b *breaker) strikeExisting(key string, owner metav1.Object, pods []*corev1.Pod, replicas, burst int) (*stoppedError, bool) {
	if len(pods) == 0 {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.ledgerLocked(key, owner)
	for _, p := range pods {
		l.strike(p.UID, causeNotObserved)
	}
	if l.open != nil || len(l.struck) < strikeBound(replicas, burst) {
		return l.open, false
	}
	l.open = &stoppedError{key: key, cause: causeNotObserved, count: len(l.struck)}
	return l.open, true
}

// unseen opens the breaker of key for owner when pods of its exist,
// carry the stamp and match, and the pod cache has passed them without
// showing them: it cannot see what the Controller creates. It
// reports whether this call opened it.
func (b *breaker) unseen(key string, owner metav1.Object, pods []*corev1.Pod) (*stoppedError, bool) {
	if len(pods) == 0 {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.ledgerLocked(key, owner)
	for _, p := range pods {
		l.strike(p.UID, causeNotObserved) // seen active later, it closes the breaker
	}
	if l.open != nil {
		return l.open, false
	}
	l.open = &stoppedError{key: key, cause: causeNotObserved, count: len(l.struck)}
	return l.open, true
}

// strike records that the created pod uid did not become active.
func (l *ledger) strike(uid types.UID, cause strikeCause) {
	if l.struck == nil {
		l.struck = make(map[types.UID]strikeCause)
	}
	l.struck[uid] = cause
}

// left handles a controlled pod's delete event for owner key: a pod with a
// deletion timestamp is really gone, and is no longer pending nor struck;
// an active one without (a label-selected watch reports a pod that lost
// the selected labels as deleted) is remembered, to be checked live before
// it is replaced.
func (b *breaker) left(key string, pod *corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.owners[key]; l != nil {
		delete(l.pending, pod.UID)
		delete(l.struck, pod.UID)
	}
	if pod.DeletionTimestamp != nil || !podrank.IsActive(pod) || pod.UID == "" {
		return
	}
	b.vanishedLocked(key, vanishedPod{pod: pod})
}

// vanishedLocked remembers v of key as out of the cache's view.
func (b *breaker) vanishedLocked(key string, v vanishedPod) {
	if b.vanished == nil {
		b.vanished = make(map[string]map[types.UID]vanishedPod)
	}
	m := b.vanished[key]
	if m == nil {
		m = make(map[types.UID]vanishedPod)
		b.vanished[key] = m
	}
	m[v.pod.UID] = v
}

// takeVanished returns and forgets the pods of key that left the cache
// without a deletion timestamp.
func (b *breaker) takeVanished(key string) []vanishedPod {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.vanished[key]
	if len(m) == 0 {
		return nil
	}
	delete(b.vanished, key)
	out := make([]vanishedPod, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	// In name order: which of them a sync reads live must not depend on
	// the map's order.
	slices.SortFunc(out, func(a, b vanishedPod) int { return strings.Compare(a.pod.Name, b.pod.Name) })
	return out
}

// dropVanished forgets the pods of key that left the cache without a
// deletion timestamp, except those that hold a strike.
func (b *breaker) dropVanished(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.vanished[key]
	if len(m) == 0 {
		return
	}
	var struck map[types.UID]strikeCause
	if l := b.owners[key]; l != nil {
		struck = l.struck
	}
	for uid := range m {
		if _, ok := struck[uid]; !ok {
			delete(m, uid)
		}
	}
	if len(m) == 0 {
		delete(b.vanished, key)
	}
}

// keepVanished remembers pods of key again, to be checked by a later sync.
func (b *breaker) keepVanished(key string, pods []vanishedPod) {
	if len(pods) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, v := range pods {
		b.vanishedLocked(key, v)
	}
}

// withdraw drops the strike of pod uid of key, which turned out to be
// gone: the breaker it opened for not observed pods closes once no strike
// is left.
func (b *breaker) withdraw(key string, uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.owners[key]
	if l == nil {
		return
	}
	delete(l.struck, uid)
	if len(l.struck) == 0 && l.open != nil && l.open.cause == causeNotObserved {
		l.open = nil
	}
}

// tracks reports whether the breaker has a ledger for key: pods created
// and not yet seen, strikes, or an open breaker. Most syncs have none, and
// skip settle.
func (b *breaker) tracks(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.owners[key]
	return ok
}

// forget drops everything the breaker holds for key.
func (b *breaker) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.owners, key)
	delete(b.vanished, key)
}

// has reports whether the breaker holds anything for key.
func (b *breaker) has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.owners[key]
	_, gone := b.vanished[key]
	return ok || gone
}
