package ctrlruntime_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

// An operator with its own Tracker, one key per pod group of an owner,
// wraps the handler that enqueues the pod's owner; in a manager, the
// result goes to the builder's Watches of pods. Here controller-runtime's
// create event is delivered by hand.
func ExampleTrackPods() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)

	var tracker perpod.Tracker
	keys := perpod.KeysByOwner("ReplicaSet", "example.com/group")
	h := ctrlruntime.TrackPods(&tracker, keys,
		handler.EnqueueRequestForOwner(scheme, mapper, &appsv1.ReplicaSet{}, handler.OnlyControllerOwner()))
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[crreconcile.Request]())
	defer queue.ShutDown()

	tracker.ExpectCreation("default/web/canary", "default/web-canary-1") // the reconcile, before its create
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "web-canary-1",
		Labels:          map[string]string{"example.com/group": "canary"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "u1", Controller: new(true)}},
	}}
	h.Create(context.Background(), event.CreateEvent{Object: pod}, queue)
	req, _ := queue.Get()
	fmt.Println(req, tracker.Satisfied("default/web/canary"))

	// Tracker.Observe checks the pending pod keys against the manager's
	// client (mgr.GetClient()), e.g. after a missed event.
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).Build()
	tracker.ExpectCreation("default/web/canary", "default/web-canary-1") // re-sent, say
	tracker.ExpectCreation("default/web/canary", "default/web-canary-2") // not created yet
	observed, err := tracker.Observe("default/web/canary", ctrlruntime.PodLookup(context.Background(), c))
	creations, _ := tracker.Pending("default/web/canary")
	fmt.Println(observed, err, creations)
	// Output:
	// default/web true
	// 1 <nil> [default/web-canary-2]
}
