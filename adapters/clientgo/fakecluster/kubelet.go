package fakecluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// KubeletOptions configure a [Kubelet]. The zero value is usable.
type KubeletOptions struct {
	// Nodes is the number of nodes pods are scheduled onto; <= 0 means 3.
	Nodes int
	// ReadyDelay is the mean time from scheduling to Running and Ready; each
	// pod draws its delay uniformly from [ReadyDelay/2, 3·ReadyDelay/2].
	// Zero makes pods ready as soon as they are scheduled.
	ReadyDelay time.Duration
	// TerminationDelay is the longest time a terminating pod lingers before
	// it is removed (drawn uniformly from [0, TerminationDelay]).
	TerminationDelay time.Duration
	// Workers is the number of concurrent pod updates; <= 0 means 4.
	Workers int
	// Seed seeds the delays and node choices.
	Seed uint64
}

// Kubelet simulates the scheduler and the kubelets of a few nodes: it binds
// every new pod to the least loaded node, makes it Running and Ready after
// a random delay, and removes terminating pods after a short grace period.
// Create it with [NewKubelet] and start it with [Kubelet.Run].
type Kubelet struct {
	client kubernetes.Interface
	opts   KubeletOptions
	queue  workqueue.TypedRateLimitingInterface[string]
	pods   corelisters.PodLister
	synced cache.InformerSynced
	start  func(<-chan struct{})

	mu       sync.Mutex // guards the fields below
	rng      *rand.Rand
	perNode  map[string]int
	nodeOf   map[string]string    // pod key → node it was bound to
	readyAt  map[string]time.Time // pod key → when it becomes ready
	removeAt map[string]time.Time // pod key → when a terminating pod is removed
}

// NewKubelet returns a kubelet for the cluster behind client.
func NewKubelet(client kubernetes.Interface, opts KubeletOptions) *Kubelet {
	if opts.Nodes <= 0 {
		opts.Nodes = 3
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Pods()
	k := &Kubelet{
		client: client,
		opts:   opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 500*time.Millisecond),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "kubelet"}),
		pods:     inf.Lister(),
		synced:   inf.Informer().HasSynced,
		start:    factory.Start,
		rng:      rand.New(rand.NewPCG(opts.Seed, opts.Seed+1)),
		perNode:  map[string]int{},
		nodeOf:   map[string]string{},
		readyAt:  map[string]time.Time{},
		removeAt: map[string]time.Time{},
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			k.queue.Add(key)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, cur any) { enqueue(cur) },
		DeleteFunc: enqueue,
	})
	return k
}

// Run starts the kubelet and blocks until ctx is done and every goroutine it
// started has returned.
func (k *Kubelet) Run(ctx context.Context) {
	var wg sync.WaitGroup
	k.start(ctx.Done())
	defer wg.Wait()
	defer k.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), k.synced) {
		return
	}
	for range k.opts.Workers {
		wg.Go(func() {
			for k.next(ctx) {
			}
		})
	}
	<-ctx.Done()
}

func (k *Kubelet) next(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	after, err := k.handle(ctx, key)
	switch {
	case err != nil:
		k.queue.AddRateLimited(key)
	case after > 0:
		k.queue.Forget(key)
		k.queue.AddAfter(key, after)
	default:
		k.queue.Forget(key)
	}
	return true
}

// handle moves one pod a step forward; it returns how long to wait before
// the next step is due.
func (k *Kubelet) handle(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	pod, err := k.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		k.forget(key)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	now := time.Now()
	switch {
	case pod.DeletionTimestamp != nil:
		at := k.due(k.removeAt, key, now, 0, k.opts.TerminationDelay)
		if wait := at.Sub(now); wait > 0 {
			return wait, nil
		}
		var zero int64
		uid := pod.UID
		err := k.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			err = nil
		}
		return 0, err
	case pod.Spec.NodeName == "":
		p := pod.DeepCopy()
		p.Spec.NodeName = k.pickNode(key)
		_, err := k.client.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			k.unbind(key)
			if apierrors.IsNotFound(err) {
				return 0, nil
			}
		}
		return 0, err
	case pod.Status.Phase != corev1.PodRunning:
		d := k.opts.ReadyDelay
		at := k.due(k.readyAt, key, now, d/2, d)
		if wait := at.Sub(now); wait > 0 {
			return wait, nil
		}
		_, err := k.client.CoreV1().Pods(ns).UpdateStatus(ctx, runningAndReady(pod, now), metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			err = nil
		}
		return 0, err
	}
	return 0, nil
}

// due returns the deadline stored for key in m, first drawing one from
// now + min + [0, spread] if there is none.
func (k *Kubelet) due(m map[string]time.Time, key string, now time.Time, minimum, spread time.Duration) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := m[key]
	if !ok {
		at = now.Add(minimum)
		if spread > 0 {
			at = at.Add(time.Duration(k.rng.Int64N(int64(spread) + 1)))
		}
		m[key] = at
	}
	return at
}

func (k *Kubelet) pickNode(key string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n, ok := k.nodeOf[key]; ok {
		return n
	}
	best := ""
	for i := range k.opts.Nodes {
		n := fmt.Sprintf("node-%d", i+1)
		if best == "" || k.perNode[n] < k.perNode[best] {
			best = n
		}
	}
	k.perNode[best]++
	k.nodeOf[key] = best
	return best
}

func (k *Kubelet) unbind(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n, ok := k.nodeOf[key]; ok {
		k.perNode[n]--
		delete(k.nodeOf, key)
	}
}

func (k *Kubelet) forget(key string) {
	k.unbind(key)
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.readyAt, key)
	delete(k.removeAt, key)
}

// runningAndReady returns a copy of pod with the status a kubelet reports
// once all containers started and passed their readiness probes.
func runningAndReady(pod *corev1.Pod, now time.Time) *corev1.Pod {
	p := pod.DeepCopy()
	t := metav1.NewTime(now)
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &t
	p.Status.HostIP = "10.0.0.1"
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
	}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		started := true
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
		})
	}
	return p
}
