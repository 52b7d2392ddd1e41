package reconcile_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// A ReplicaSet controller's sync handler and pod event handler, on top of a
// tiny in-memory "API" (exPods) standing in for a clientset and informer.
func Example() {
	ctx := context.Background()
	api := &exPods{}
	replicas := int32(3)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "1234"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		}},
	}

	m := &reconcile.Manager{Pods: api}
	events := &reconcile.Observer{
		Expectations: m.Tracker(),
		Resolve: func(ns string, ref metav1.OwnerReference) (reconcile.Owned, bool) {
			if ns != rs.Namespace || ref.Name != rs.Name || ref.UID != rs.UID { // a lister lookup
				return reconcile.Owned{}, false
			}
			return reconcile.Owned{Key: reconcile.OwnerKey(ns, ref.Name)}, true
		},
	}
	syncHandler := func() {
		res, err := m.Sync(ctx, reconcile.SyncRequest{Owner: reconcile.ReplicaSetOwner(rs), Pods: api.List})
		if err != nil { // the sync did not run to the end: return err to retry
			fmt.Println("sync failed:", err)
			return
		}
		// The status carries the manage error (R-8.4); then UpdateStatus, and
		// return its error first, then res.ManageErr (R-10.7).
		rs.Status = status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, status.Options{})
		fmt.Printf("satisfied=%t created=%d batches=%v deleted=%d replicas=%d\n",
			res.Satisfied, len(res.Outcome.Created), res.Outcome.Batches, len(res.Outcome.Deleted), rs.Status.Replicas)
	}

	syncHandler() // creates 3 pods
	syncHandler() // waits: the informer has not shown them yet
	api.deliver(events.PodAdded)
	syncHandler() // satisfied; nothing to do
	replicas = 1
	syncHandler() // deletes 2
	api.deliver(events.PodDeleted)
	syncHandler()
	// Output:
	// satisfied=true created=3 batches=[1 2] deleted=0 replicas=0
	// satisfied=false created=0 batches=[] deleted=0 replicas=0
	// satisfied=true created=0 batches=[] deleted=0 replicas=3
	// satisfied=true created=0 batches=[] deleted=2 replicas=3
	// satisfied=true created=0 batches=[] deleted=0 replicas=1
}

// exPods is an in-memory PodControl for the example: it stores pods, names
// them from GenerateName and queues one watch event per change, delivered
// on demand. It models nothing else of an API server.
type exPods struct {
	mu      sync.Mutex
	pods    map[string]*corev1.Pod
	seq     int
	pending []*corev1.Pod // changed pods whose event was not delivered
	cache   map[string]*corev1.Pod
}

func (a *exPods) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pods == nil {
		a.pods, a.cache = map[string]*corev1.Pod{}, map[string]*corev1.Pod{}
	}
	p := pod.DeepCopy()
	a.seq++
	p.Name = p.GenerateName + strconv.Itoa(a.seq)
	p.ResourceVersion = strconv.Itoa(a.seq)
	a.pods[p.Name] = p
	a.pending = append(a.pending, p)
	return p, nil
}

func (a *exPods) DeletePod(_ context.Context, pod *corev1.Pod) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pods, pod.Name)
	a.pending = append(a.pending, pod)
	return nil
}

// List returns the informer cache's pods, in name order.
func (a *exPods) List(context.Context) ([]*corev1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(a.cache))
	for _, p := range a.cache {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// deliver updates the cache with the pending changes and hands each to
// handler, like an informer.
func (a *exPods) deliver(handler func(*corev1.Pod) []reconcile.Request) {
	a.mu.Lock()
	pending := a.pending
	a.pending = nil
	for _, p := range pending {
		if _, live := a.pods[p.Name]; live {
			a.cache[p.Name] = p
		} else {
			delete(a.cache, p.Name)
		}
	}
	a.mu.Unlock()
	for _, p := range pending {
		handler(p) // a controller would enqueue the returned requests
	}
}
