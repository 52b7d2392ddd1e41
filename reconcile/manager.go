package reconcile

import (
	"sync"
	"time"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

// DefaultBurstReplicas is the most pods one ManageReplicas call creates, or
// deletes, when Manager.BurstReplicas is not set.
const DefaultBurstReplicas = 500

// Clock tells a [Controller] or a [Manager] the time: it is
// [expectations.Clock], the library's one clock interface, under this
// package's name. Clocks from k8s.io/utils/clock satisfy it, as does
// [time.Now] wrapped in a type.
type Clock = expectations.Clock

// Manager creates and deletes an owner's pods so that the number of active
// pods approaches the desired number, keeping expectations right: upstream's
// manageReplicas (docs/rules.md §9).
//
// The zero Manager (with Pods set) behaves as upstream: a private
// expectations Tracker on the Manager's clock, bursts of 500, slow-start
// creates from a batch of 1, the deletion ranking with deletion cost and
// logarithmic scale-down, counted (not tracked) creations, no hooks.
//
// The Manager is the primitive layer: a controller normally uses a
// [Controller], which builds one and owns the wiring around it.
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
	// observed. Share it with whatever feeds it pod events. Nil means a
	// private Tracker on Clock, reachable through [Manager.Tracker].
	//
	// The Manager also records the resourceVersion of every pod it creates
	// in the consistency gate of a Tracker built on one
	// (expectations.Options.Gate; Gate.Wrote under
	// expectations.PodsResource, with the owner's UID), for the gate and
	// EvidenceFirst; deletes are not recorded. Such a Gate is the
	// caller's own: checking it (Gate.Ready) and clearing an owner's record
	// when the owner goes (Gate.Clear) are the caller's, as upstream clears
	// its consistency store; a [Controller] does both. The private Tracker
	// has no Gate, so a Manager without Expectations records nothing that
	// would need clearing.
	Expectations *expectations.Tracker
	// BurstReplicas caps the creates, and separately the deletes, of one
	// call. <= 0 means DefaultBurstReplicas (500).
	BurstReplicas int
	// Clock is the time source: for the deletion ranking's logarithmic
	// buckets (podrank's Options.Now), for the private Tracker (read at
	// each call, see [Manager.Tracker]), and for the victims' age in Hooks.
	// Nil means real time.
	Clock Clock
	// Ranking configures the choice of pods to delete ([podrank.ForDeletion]),
	// at Clock's time. The zero value is upstream's ranking.
	Ranking RankingOptions
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
	// Fence, when set, answers "may this replica still write?": it is
	// called immediately before each pod create and each pod delete (not
	// once per batch), and a non-nil error refuses that call. The refused
	// call is not made, no further create or delete of the ManageReplicas
	// call is made (the fence is not asked again), the creations and
	// deletions not made are lowered in the expectations exactly as failed
	// ones (Outcome.Fenced counts them), and ManageReplicas returns an
	// error for which errors.Is(err, ErrFenced) and errors.Is(err, reason)
	// hold. Concurrent creates of a batch and concurrent deletes ask it one
	// at a time. It must be safe for concurrent use by different owners'
	// calls, and fast: it is called once per write (an adapter's fence
	// reads a clock). A leader-election adapter fills it (the adapters'
	// fencing package). Nil never refuses: upstream's behaviour.
	//
	// Beyond upstream, which has no such check (docs/rules.md, R-13.1): a
	// replica paused past its lease makes no write once it resumes.
	Fence func() error

	once    sync.Once
	private *expectations.Tracker

	mu        sync.Mutex
	uncertain map[string]uncertainNames // owner key → names of failed tracked creates to retry
	swept     time.Time                 // the last sweepUncertain that looked

	// requireNames makes a created pod returned without a name a failed
	// create (set by NewController; a bare Manager keeps upstream's
	// behaviour, which does not look at the returned pod).
	requireNames bool
}

// Tracker returns the expectations Tracker the Manager uses:
// m.Expectations, or the private one made on first use when that is nil.
// The private Tracker reads the time from m.Clock at each call, so a Clock
// set after the first call is not ignored; it has no consistency Gate.
func (m *Manager) Tracker() *expectations.Tracker {
	if m.Expectations != nil {
		return m.Expectations
	}
	m.once.Do(func() {
		m.private = expectations.New(expectations.Options{Clock: managerClock{m}})
	})
	return m.private
}

// managerClock is the private Tracker's clock: the Manager's Clock as it
// is at each reading.
type managerClock struct{ m *Manager }

func (c managerClock) Now() time.Time { return c.m.now() }

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
