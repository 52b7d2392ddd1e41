package main

import (
	"context"
	"errors"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podTally is the bookkeeping of the driver's own pod watch: the live pods
// (neither terminating nor terminal) of each owner, the pods added since
// the phase began, and the most live pods above the desired count while
// the desired count does not go down, in two readings:
//   - peakSum: the most, at any one moment, of the surplus summed over the
//     owners (each owner's live pods above desired, 0 when it has fewer), so
//     one owner's shortfall never hides another's surplus;
//   - peakOne: the most any one owner ever had above desired.
//
// With one owner both are the single owner's surplus. Every owner has the
// same desired count. The zero value is not ready: use newPodTally. Not
// safe for concurrent use (liveWatch guards it).
type podTally struct {
	owner     map[string]string // live pod → its controller's name
	live      map[string]int    // owner → live pods
	added     int
	desired   int
	scalingUp bool
	sum       int // Σ over owners of max(0, live − desired), now
	peakSum   int
	peakOne   int
}

func newPodTally() *podTally {
	return &podTally{owner: map[string]string{}, live: map[string]int{}}
}

// surplus is one owner's live pods above desired, 0 when it has fewer.
func (t *podTally) surplus(owner string) int {
	return max(0, t.live[owner]-t.desired)
}

// observe records pod's state: alive (not terminating, not terminal) and
// controlled by owner ("" for none: not counted for any owner). added
// counts it as a new pod.
func (t *podTally) observe(pod, owner string, alive, added bool) {
	if added {
		t.added++
	}
	t.forget(pod)
	if !alive || owner == "" {
		return
	}
	before := t.surplus(owner)
	t.owner[pod] = owner
	t.live[owner]++
	t.sum += t.surplus(owner) - before
	if t.scalingUp {
		t.peakSum = max(t.peakSum, t.sum)
		t.peakOne = max(t.peakOne, t.live[owner]-t.desired)
	}
}

// forget removes pod from the live ones (deleted, or before an update).
func (t *podTally) forget(pod string) {
	owner, ok := t.owner[pod]
	if !ok {
		return
	}
	before := t.surplus(owner)
	delete(t.owner, pod)
	t.live[owner]--
	if t.live[owner] == 0 {
		delete(t.live, owner)
	}
	t.sum += t.surplus(owner) - before
}

// setDesired sets every owner's desired count; the peaks are tracked from
// now on only if it did not go down.
func (t *podTally) setDesired(n int) {
	t.scalingUp = n >= t.desired
	t.desired = n
	t.sum = 0
	for o := range t.live {
		t.sum += t.surplus(o)
	}
	if t.scalingUp {
		t.peakSum = max(t.peakSum, t.sum)
		for o := range t.live {
			t.peakOne = max(t.peakOne, t.live[o]-t.desired)
		}
	}
}

// liveWatch follows the namespace's pods straight from kube-apiserver (not
// through the proxy) into a podTally. Safe for concurrent use.
type liveWatch struct {
	stop func()

	mu    sync.Mutex
	tally *podTally
}

func watchLive(ctx context.Context, client kubernetes.Interface, ns string) (*liveWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &liveWatch{tally: newPodTally()}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
		informers.WithTransform(trimPod))
	inf := factory.Core().V1().Pods().Informer()
	update := func(obj any, added bool) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		// R-5.1's "active", written out rather than imported from podrank:
		// this module judges our controller and kube-controller-manager
		// alike and does not depend on the library.
		alive := p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
		owner := ""
		if ref := metav1.GetControllerOf(p); ref != nil {
			owner = ref.Name
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.tally.observe(p.Name, owner, alive, added)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { update(obj, true) },
		UpdateFunc: func(_, obj any) { update(obj, false) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				w.mu.Lock()
				w.tally.forget(p.Name)
				w.mu.Unlock()
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	w.stop = func() { cancel(); factory.Shutdown() }
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			w.stop()
			return nil, errors.New("the pod watch did not sync")
		}
	}
	return w, nil
}

// trimPod keeps of a pod only what the driver reads: at tens of thousands
// of pods the driver shares the cores with the contender.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
			ResourceVersion: p.ResourceVersion, DeletionTimestamp: p.DeletionTimestamp, OwnerReferences: p.OwnerReferences},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}, nil
}

func (w *liveWatch) setDesired(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tally.setDesired(n)
}

func (w *liveWatch) resetAdds() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tally.added = 0
}

// counts returns the live pods of all owners and the pods added since resetAdds.
func (w *liveWatch) counts() (live, added int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.tally.owner), w.tally.added
}

// liveOf returns the live pods of owner.
func (w *liveWatch) liveOf(owner string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tally.live[owner]
}

// maxExtra returns the peaks of the surplus: summed over the owners, and
// of one owner (podTally).
func (w *liveWatch) maxExtra() (sum, one int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tally.peakSum, w.tally.peakOne
}

// livePods returns the names of the live pods, sorted.
func (w *liveWatch) livePods() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.tally.owner))
	for n := range w.tally.owner {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
