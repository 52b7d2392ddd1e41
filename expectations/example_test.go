package expectations_test

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

// A controller expects its creations before it issues them, its pod add
// handler observes them, and a sync acts only when the key is satisfied.
func Example() {
	var tracker expectations.Tracker // the zero Tracker: real clock, DefaultTTL

	const key = "default/web"
	fmt.Println("before any expectation:", tracker.Satisfied(key))

	tracker.ExpectCreations(key, 2) // before the two create calls
	fmt.Println("after expecting 2 creations:", tracker.Satisfied(key))

	tracker.CreationObserved(key) // pod add events
	tracker.CreationObserved(key)
	fmt.Println("after observing both:", tracker.Satisfied(key))
	// Output:
	// before any expectation: true
	// after expecting 2 creations: false
	// after observing both: true
}

// Deletions are tracked by pod key, so a pod seen deleted twice (as a
// deletion-timestamp update and as the delete itself) counts once.
func ExampleTracker_ExpectDeletions() {
	tracker := expectations.New(expectations.Options{})
	const key = "default/web"

	tracker.ExpectDeletions(key, []string{"default/web-a", "default/web-b"})
	tracker.DeletionObserved(key, "default/web-a") // update with deletionTimestamp
	tracker.DeletionObserved(key, "default/web-a") // the delete event
	tracker.DeletionObserved(key, "default/other") // not expected: ignored

	adds, dels, _ := tracker.Pending(key)
	fmt.Println(adds, dels, tracker.Satisfied(key))
	tracker.DeletionObserved(key, "default/web-b")
	fmt.Println(tracker.Satisfied(key))
	// Output:
	// 0 1 false
	// true
}

// Expectations that are never observed stop blocking once they are strictly
// older than the TTL.
func ExampleOptions() {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tracker := expectations.New(expectations.Options{TTL: time.Minute, Clock: clock})
	const key = "default/web"

	tracker.ExpectCreations(key, 1) // the add event will be lost
	clock.Step(time.Minute)
	fmt.Println("exactly TTL old:", tracker.Satisfied(key))
	clock.Step(time.Nanosecond)
	fmt.Println("older than TTL:", tracker.Satisfied(key))
	// Output:
	// exactly TTL old: false
	// older than TTL: true
}

// A Snapshot says why a key is not satisfied, for a log line.
func ExampleTracker_Snapshot() {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tracker := expectations.New(expectations.Options{Clock: clock})
	const key = "default/web"

	tracker.ExpectDeletions(key, []string{"default/web-b", "default/web-a"})
	clock.Step(42 * time.Second)

	snap, _ := tracker.Snapshot(key)
	fmt.Println(snap)
	fmt.Println(snap.DeletionKeys)
	// Output:
	// default/web: waiting for 2 deletions [default/web-a default/web-b] for 42s (expires after 5m0s)
	// [default/web-a default/web-b]
}

// A controller that names its pods before creating them can expect exactly
// those pods: a duplicate add event, or a pod created by someone else, does
// not count.
func ExampleTracker_ExpectCreationKeys() {
	tracker := expectations.New(expectations.Options{})
	const key = "default/web"

	tracker.ExpectCreationKeys(key, []string{"default/web-7f2x9", "default/web-k4m2q"})
	tracker.CreationObservedKey(key, "default/web-7f2x9")
	tracker.CreationObservedKey(key, "default/web-7f2x9") // duplicate event
	tracker.CreationObservedKey(key, "default/intruder")  // not ours
	fmt.Println(tracker.Satisfied(key))

	tracker.CreationObservedKey(key, "default/web-k4m2q") // or its create failed
	fmt.Println(tracker.Satisfied(key))
	// Output:
	// false
	// true
}

// With EvidenceFirst the Tracker compares the informer's synced
// resourceVersion with the controller's own writes, which it reads from the
// Gate: a cache that is behind keeps the key waiting past the TTL, a cache
// that has passed the writes without delivering their events resolves the
// key at once.
func ExampleEvidenceFirst() {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cacheRV := "100" // what informer.LastStoreSyncResourceVersion() would say
	gate := expectations.NewGate(expectations.GateOptions{
		Caches: map[schema.GroupResource]func() string{
			expectations.PodsResource: func() string { return cacheRV },
		},
	})
	tracker := expectations.New(expectations.Options{
		Clock:  clock,
		Policy: expectations.EvidenceFirst,
		Gate:   gate,
	})
	const key = "default/web"

	tracker.ExpectCreationKeys(key, []string{"default/web-a"})
	gate.Wrote(key, "uid-of-web", expectations.PodsResource, "120") // the create response's resourceVersion

	clock.Step(6 * time.Minute) // past the TTL, but the cache lags
	fmt.Println(tracker.Check(key).Resolution)

	cacheRV = "125" // the cache passed our write; the add event was lost
	st := tracker.Check(key)
	fmt.Println(st.Resolution, st.Satisfied)
	// Output:
	// WaitingForCache
	// ResolvedByEvidence true
}

// Hooks feed metrics: how long each round was pending and how it ended.
func ExampleHooks() {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tracker := expectations.New(expectations.Options{
		Clock: clock,
		Hooks: expectations.Hooks{
			Resolved: func(key string, r expectations.Resolution, pending time.Duration) {
				fmt.Printf("%s: %v after %v\n", key, r, pending)
			},
		},
	})
	const key = "default/web"

	tracker.ExpectCreations(key, 1)
	clock.Step(3 * time.Second)
	tracker.CreationObserved(key)
	tracker.Satisfied(key) // reports the resolution
	tracker.Satisfied(key) // once per round
	// Output:
	// default/web: Fulfilled after 3s
}

// Read your own writes, for any controller and any resource: record each of
// the controller's writes, and start every sync with Ready, which defers the
// sync while an informer cache is older than the controller's newest write
// for that owner (upstream v1.37's consistency gate).
func ExampleGate_Ready() {
	configMaps := schema.GroupResource{Resource: "configmaps"}
	cacheRV := "100" // what the informer store's LastStoreSyncResourceVersion would say
	gate := expectations.NewGate(expectations.GateOptions{
		Caches: map[schema.GroupResource]func() string{
			configMaps: func() string { return cacheRV },
		},
	})

	const key = "default/app"
	// The sync wrote a ConfigMap; the API server answered resourceVersion 120.
	gate.Wrote(key, "uid-of-app", configMaps, "120")

	// The next sync, before the informer has seen that write:
	err := gate.Ready(key)
	var stale *expectations.StaleCacheError
	fmt.Println("deferred:", errors.As(err, &stale), stale.Resource, stale.Read, "<", stale.Written)

	cacheRV = "121" // the watch event arrived
	fmt.Println("ready:", gate.Ready(key) == nil)
	// Output:
	// deferred: true configmaps 100 < 120
	// ready: true
}
