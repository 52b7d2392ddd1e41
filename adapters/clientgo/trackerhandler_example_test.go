package clientgo_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// An operator with its own Tracker, one key per pod group of an owner,
// adds TrackPods to its pod informer (pods.Informer().AddEventHandler) in
// place of its own handler, which TrackPods calls after recording each
// event. Here the informer's events are delivered by hand.
func ExampleTrackPods() {
	var tracker perpod.Tracker
	keys := perpod.KeysByOwner("RayCluster", "ray.io/group")
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	enqueueOwner := cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if ref := metav1.GetControllerOf(obj.(metav1.Object)); ref != nil {
			queue.Add("default/" + ref.Name)
		}
	}}
	handler := clientgo.TrackPods(&tracker, keys, enqueueOwner)

	tracker.ExpectCreation("default/demo/workers", "default/demo-workers-x7k2p") // the sync, before its create
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "demo-workers-x7k2p",
		Labels:          map[string]string{"ray.io/group": "workers"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "demo", UID: "u1", Controller: new(true)}},
	}}
	handler.OnAdd(pod, false) // the informer's add event
	key, _ := queue.Get()
	fmt.Println(key, tracker.Satisfied("default/demo/workers"))

	// Tracker.Observe checks the pending pod keys against the informer's
	// cache, e.g. after a missed event.
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = indexer.Add(pod)
	tracker.ExpectCreation("default/demo/workers", "default/demo-workers-x7k2p") // re-sent, say
	tracker.ExpectCreation("default/demo/workers", "default/demo-workers-b9q4d") // not in the cache yet
	observed, err := tracker.Observe("default/demo/workers", clientgo.PodLookup(corelisters.NewPodLister(indexer)))
	creations, _ := tracker.Pending("default/demo/workers")
	fmt.Println(observed, err, creations)
	// Output:
	// default/demo true
	// 1 <nil> [default/demo-workers-b9q4d]
}
