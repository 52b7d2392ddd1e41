package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// Options configure a [Controller]. The zero value is upstream's controller.
type Options struct {
	// Recorder receives the pod events; nil records none.
	Recorder record.EventRecorder
	// BurstReplicas caps the creates, and the deletes, of one sync;
	// <= 0 means 500.
	BurstReplicas int
	// Exact turns on reconcilekit's exact expectations: creations tracked
	// by pod key and the EvidenceFirst expiry policy fed by the pod
	// informer's store resourceVersion. Off: upstream's counters and the
	// 5-minute timeout.
	Exact bool
	// ExpectationsTTL overrides the 5-minute expectations timeout (tests
	// use a short one); <= 0 means the default.
	ExpectationsTTL time.Duration
	// RateLimiter paces retries of failed syncs; nil means client-go's
	// default controller rate limiter (per-item exponential from 5 ms,
	// overall 10 qps with a burst of 100).
	RateLimiter workqueue.TypedRateLimiter[string]
	// OnSync, if set, is called after every sync (from the worker
	// goroutine, so it must be quick), with what the sync saw and did.
	OnSync func(Report)
}

// Report describes one sync, for progress output and tests.
type Report struct {
	Key      string
	Start    time.Time
	Duration time.Duration
	// Found is false when the ReplicaSet no longer exists.
	Found bool
	// Desired is spec.replicas.
	Desired int32
	// Sync is what reconcile.Manager.Sync saw and did (zero when the sync
	// ended before it).
	Sync reconcile.SyncResult
	// Pending is the expectations' snapshot after the sync.
	Pending expectations.Snapshot
	// Adopted and Released count the claim step's patches.
	Adopted, Released int
	// Status is the status after the sync (written or unchanged), and
	// Wrote reports that it was written.
	Status appsv1.ReplicaSetStatus
	Wrote  bool
	// RequeueAfter is the availability requeue, if Requeued.
	Requeued     bool
	RequeueAfter time.Duration
	// Err is the sync's error (it is then retried with backoff).
	Err error
}

// Controller is a ReplicaSet controller. Create it with [New] and run it
// with [Controller.Run] (once). Its workqueue hands each key to one worker
// at a time, which is the concurrency the reconcile.Manager requires.
type Controller struct {
	client    kubernetes.Interface
	rsLister  appslisters.ReplicaSetLister
	podLister corelisters.PodLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	tracker   *expectations.Tracker
	manager   *reconcile.Manager
	observer  *reconcile.Observer
	onSync    func(Report)
}

// New wires a controller to the given informers (which the caller starts).
func New(client kubernetes.Interface, rsInformer appsinformers.ReplicaSetInformer, podInformer coreinformers.PodInformer, opts Options) (*Controller, error) {
	c := &Controller{
		client:    client,
		rsLister:  rsInformer.Lister(),
		podLister: podInformer.Lister(),
		synced:    []cache.InformerSynced{rsInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		onSync:    opts.OnSync,
	}
	limiter := opts.RateLimiter
	if limiter == nil {
		limiter = workqueue.DefaultTypedControllerRateLimiter[string]()
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "replicaset"})

	eopts := expectations.Options{TTL: opts.ExpectationsTTL}
	if opts.Exact {
		// The store version, not the reflector's: it only passes a write
		// once the lister can return the written pod.
		store := podInformer.Informer().GetIndexer()
		eopts.Policy = expectations.EvidenceFirst
		eopts.CacheVersion = store.LastStoreSyncResourceVersion
	}
	c.tracker = expectations.New(eopts)
	c.manager = &reconcile.Manager{
		Pods:           PodControl{Client: client, Recorder: opts.Recorder},
		Expectations:   c.tracker,
		BurstReplicas:  opts.BurstReplicas,
		TrackCreations: opts.Exact,
	}
	c.observer = &reconcile.Observer{
		Expectations: c.tracker,
		Resolve:      c.resolve,
		Match:        c.match,
	}

	if _, err := rsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.rsAdded,
		UpdateFunc: c.rsUpdated,
		DeleteFunc: c.rsDeleted,
	}); err != nil {
		return nil, err
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				c.enqueue(c.observer.PodAdded(pod))
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Pod)
			n, ok2 := cur.(*corev1.Pod)
			if ok1 && ok2 {
				c.enqueue(c.observer.PodUpdated(o, n))
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj // the last state the informer knew, maybe stale
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				c.enqueue(c.observer.PodDeleted(pod))
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Expectations returns the controller's expectations tracker, for
// inspection (e.g. Snapshot) in logs and tests.
func (c *Controller) Expectations() *expectations.Tracker { return c.tracker }

// Run waits for the informers' caches, then syncs ReplicaSets with the
// given number of workers until ctx is done. It returns once every worker
// has stopped.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("replicaset controller: caches did not sync: %w", context.Cause(ctx))
	}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		klog.FromContext(ctx).V(2).Info("Sync failed, requeueing with backoff", "replicaset", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *Controller) enqueue(reqs []reconcile.Request) {
	for _, r := range reqs {
		if r.After > 0 {
			c.queue.AddAfter(r.Key, r.After)
		} else {
			c.queue.Add(r.Key)
		}
	}
}

// resolve finds the ReplicaSet a pod's controller ref names: same
// namespace, same name, same UID.
func (c *Controller) resolve(namespace string, ref metav1.OwnerReference) (reconcile.Owned, bool) {
	rs, err := c.rsLister.ReplicaSets(namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return reconcile.Owned{}, false
	}
	return reconcile.Owned{Key: reconcile.OwnerKey(namespace, rs.Name), MinReadySeconds: rs.Spec.MinReadySeconds}, true
}

// match returns the keys of the ReplicaSets whose selector matches an
// orphan pod; an empty or invalid selector matches nothing.
func (c *Controller) match(pod *corev1.Pod) []string {
	all, err := c.rsLister.ReplicaSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, rs := range all {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		keys = append(keys, reconcile.OwnerKey(rs.Namespace, rs.Name))
	}
	return keys
}

func (c *Controller) rsAdded(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) rsUpdated(old, cur any) {
	o, ok1 := old.(*appsv1.ReplicaSet)
	n, ok2 := cur.(*appsv1.ReplicaSet)
	if !ok1 || !ok2 {
		return
	}
	if o.UID != n.UID {
		// Recreated under the same name: the old one's expectations go.
		c.enqueue(c.observer.OwnerDeleted(reconcile.OwnerKey(o.Namespace, o.Name)))
	}
	c.rsAdded(n)
}

func (c *Controller) rsDeleted(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.enqueue(c.observer.OwnerDeleted(key))
}

// sync brings one ReplicaSet towards its desired state (SPEC §10).
func (c *Controller) sync(ctx context.Context, key string) (err error) {
	rep := Report{Key: key, Start: time.Now()}
	defer func() {
		if c.onSync != nil {
			rep.Duration = time.Since(rep.Start)
			rep.Pending, _ = c.tracker.Snapshot(key)
			rep.Err = err
			c.onSync(rep)
		}
	}()
	logger := klog.FromContext(ctx).WithValues("replicaset", key)

	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not ours to retry
	}
	rs, err := c.rsLister.ReplicaSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.tracker.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	rep.Found = true
	rep.Status = rs.Status
	owner := reconcile.ReplicaSetOwner(rs)
	rep.Desired = owner.Replicas
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		logger.Error(err, "Invalid selector; not syncing") // no requeue
		return nil
	}

	res, err := c.manager.Sync(ctx, reconcile.SyncRequest{
		Owner:           owner,
		Deleting:        rs.DeletionTimestamp != nil,
		MinReadySeconds: rs.Spec.MinReadySeconds,
		Pods: func(ctx context.Context) ([]*corev1.Pod, error) {
			all, err := c.podLister.Pods(ns).List(labels.Everything())
			if err != nil {
				return nil, err
			}
			cl, err := c.claim(ctx, rs, selector, all)
			rep.Adopted, rep.Released = cl.adopted, cl.released
			return cl.pods, err
		},
		Related: func(context.Context) ([]*corev1.Pod, error) { return c.related(rs) },
	})
	rep.Sync = res
	if err != nil {
		return err // the sync did not run to the end (listing or claiming failed): nothing to write
	}
	if res.RelatedErr != nil {
		logger.Error(res.RelatedErr, "Listing related pods failed; deletion ranks were zero")
	}

	newStatus := status.Calculate(rs, res.Active, res.Terminating, res.ManageErr, res.Now, status.Options{})
	written, wrote, err := c.writeStatus(ctx, rs, newStatus)
	if err != nil {
		return err // the status error first
	}
	rep.Status, rep.Wrote = written.Status, wrote
	if res.ManageErr != nil {
		return res.ManageErr
	}
	// from the status as written (or as it already was).
	if d, ok := status.RequeueAfter(written.Status.ReadyReplicas, written.Status.AvailableReplicas,
		res.Active, rs.Spec.MinReadySeconds, res.Now, time.Now()); ok {
		rep.Requeued, rep.RequeueAfter = true, d
		c.queue.AddAfter(key, d)
	}
	return nil
}

// writeStatus writes newStatus to rs unless the skip rule says it already
// has it, with one retry on a freshly read object: at most two
// UpdateStatus calls and one GET. It never modifies rs.
func (c *Controller) writeStatus(ctx context.Context, rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, bool, error) {
	if !status.NeedsUpdate(rs, newStatus) {
		return rs, false, nil
	}
	toWrite := status.ForWrite(rs, newStatus) // observedGeneration: what we acted on
	client := c.client.AppsV1().ReplicaSets(rs.Namespace)
	obj := rs.DeepCopy()
	var updateErr error
	for attempt := range 2 {
		obj.Status = *toWrite.DeepCopy()
		updated, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			return updated, true, nil
		}
		updateErr = err
		if attempt == 1 {
			break
		}
		fresh, err := client.Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			return nil, false, err
		}
		obj = fresh
	}
	return nil, false, updateErr
}

// related returns the pods whose nodes count towards the deletion rank
// those matching the selector of any ReplicaSet with the same
// controller as rs, de-duplicated by UID. A bare ReplicaSet has none.
func (c *Controller) related(rs *appsv1.ReplicaSet) ([]*corev1.Pod, error) {
	ctrl := metav1.GetControllerOf(rs)
	if ctrl == nil {
		return nil, nil
	}
	siblings, err := c.rsLister.ReplicaSets(rs.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	seen := map[types.UID]bool{}
	var out []*corev1.Pod
	var errs []error
	for _, s := range siblings {
		if r := metav1.GetControllerOf(s); r == nil || r.UID != ctrl.UID {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
		if err != nil {
			continue
		}
		pods, err := c.podLister.Pods(s.Namespace).List(sel)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range pods {
			if !seen[p.UID] {
				seen[p.UID] = true
				out = append(out, p)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
