package perpod_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// An operator with one key per pod group records each pod right after
// choosing it, creations and deletions under one key, and forgets all of an
// owner's groups at once.
func Example() {
	var tracker perpod.Tracker
	const key = "default/job/workers" // owner key + "/" + pod group

	tracker.ExpectDeletion(key, "default/worker-0") // before deleting it
	tracker.ExpectCreation(key, "default/worker-3") // before creating it
	tracker.ExpectCreation(key, "default/worker-4")
	tracker.ExpectCreation(key, "default/worker-4") // expected twice, counted once
	creations, deletions := tracker.Pending(key)
	fmt.Println(creations, deletions, tracker.Satisfied(key))

	tracker.CreationObserved(key, "default/worker-3") // pod add events
	tracker.CreationObserved(key, "default/worker-4")
	tracker.CreationObserved(key, "default/worker-9") // someone else's pod: nothing
	tracker.DeletionObserved(key, "default/worker-0") // pod delete event
	fmt.Println(tracker.Satisfied(key))

	tracker.ExpectCreation("default/job/ps", "default/ps-0")
	fmt.Println(tracker.KeysWithPrefix("default/job/"), tracker.DeletePrefix("default/job/"))
	// Output:
	// [default/worker-3 default/worker-4] [default/worker-0] false
	// true
	// [default/job/ps default/job/workers] 2
}

// An operator that records each pod right after writing it, times out
// creations after 30 seconds but waits for deletions however long they
// take, and checks its pending pods against its client before each sync.
func ExampleTracker_Observe() {
	tracker := perpod.New(perpod.Options{
		CreationExpiry: 30 * time.Second,
		DeletionExpiry: perpod.Never,
	})
	const key = "default/cluster/workers" // owner key + "/" + pod group

	tracker.ExpectCreation(key, "default/worker-a")   // after each create
	tracker.ExpectDeletion(key, "default/worker-old") // after each delete

	// What the operator's client (or cache) holds now: worker-a exists,
	// worker-old is still terminating.
	now := metav1.Now()
	pods := map[string]*corev1.Pod{
		"default/worker-a":   {},
		"default/worker-old": {ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}},
	}
	lookup := func(podKey string) (*corev1.Pod, error) {
		return pods[podKey], nil
	}
	observed, err := tracker.Observe(key, lookup)
	fmt.Println(observed, err, tracker.Satisfied(key))
	// Output:
	// 2 <nil> true
}
