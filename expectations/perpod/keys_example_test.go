package perpod_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// An operator with several groups of pods per owner keeps one key per
// group, "namespace/owner/group", and records its pods one at a time. Its
// pod handler maps each event's pod to those keys (the adapters' TrackPods
// does this for informer events).
func ExampleKeysByOwner() {
	keys := perpod.KeysByOwner("RayCluster", "ray.io/group")
	var tracker perpod.Tracker // the zero Tracker: 5-minute expiries

	owner := metav1.OwnerReference{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "demo", UID: "u1", Controller: new(true)}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "demo-workers-x7k2p",
		Labels:          map[string]string{"ray.io/group": "workers"},
		OwnerReferences: []metav1.OwnerReference{owner},
	}}
	fmt.Println(keys(pod))

	// The sync, about to create the pod:
	tracker.ExpectCreation("default/demo/workers", "default/demo-workers-x7k2p")
	fmt.Println(tracker.Satisfied("default/demo/workers"))

	// The informer's add event:
	for _, key := range keys(pod) {
		tracker.CreationObserved(key, pod.Namespace+"/"+pod.Name)
	}
	fmt.Println(tracker.Satisfied("default/demo/workers"))

	// An orphan, or a pod of another kind of owner, maps to no key.
	fmt.Println(keys(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stray"}}) == nil)
	// Output:
	// [default/demo/workers]
	// false
	// true
	// true
}
