package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	cluster "github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// scenario runs the controller against client and drives the demo
// ReplicaSet through its phases. cl is the in-process cluster, nil for a
// real one.
func scenario(ctx context.Context, cfg config, client kubernetes.Interface, cl *cluster.Cluster, srv *serving, out io.Writer) error {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	events := newEventCounter()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events(cfg.namespace)})
	broadcaster.StartEventWatcher(events.add)
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "reconcilekit-replicaset"})

	prog := newProgress(out, start, cfg)
	prog.header()
	ctrl, factory, err := newController(cfg, client, recorder, srv, prog.onSync)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = ctrl.Run(logContext(ctx, cfg), cfg.workers) })
	if cl != nil {
		wg.Go(func() { // the fake clientset keeps a copy of every request
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					cl.ClearActions()
				}
			}
		})
	}

	rsInf, podInf := factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods()
	d := &driver{cfg: cfg, client: client, rsLister: rsInf.Lister(), podLister: podInf.Lister(), prog: prog, expectations: ctrl.Tracker()}
	rs, err := d.createReplicaSet(ctx)
	if err != nil {
		return err
	}
	d.uid = rs.UID
	if cfg.kubeconfig != "" {
		defer func() { // leave the real cluster as we found it
			_ = client.AppsV1().ReplicaSets(cfg.namespace).Delete(context.WithoutCancel(ctx), cfg.name, metav1.DeleteOptions{})
		}()
	}

	if err := d.phase(ctx, fmt.Sprintf("create %s/%s with 0 replicas", cfg.namespace, cfg.name), 0, nil); err != nil {
		return err
	}
	if err := d.phase(ctx, fmt.Sprintf("scale 0 → %d", cfg.replicas), cfg.replicas, d.scale(cfg.replicas)); err != nil {
		return err
	}
	if cfg.disrupt > 0 {
		if err := d.phase(ctx, fmt.Sprintf("delete %d pods behind the controller's back", cfg.disrupt), cfg.replicas, d.deletePods(cfg.disrupt)); err != nil {
			return err
		}
		if err := d.phase(ctx, "create an orphan pod that matches the selector", cfg.replicas, d.createOrphan); err != nil {
			return err
		}
	}
	if err := d.phase(ctx, fmt.Sprintf("scale %d → %d", cfg.replicas, cfg.final), cfg.final, d.scale(cfg.final)); err != nil {
		return err
	}
	cancel()
	wg.Wait()
	prog.summary(d.phases, events.snapshot(), cl, ctrl.Tracker().Satisfied(cfg.namespace+"/"+cfg.name), time.Since(start))
	return nil
}

// driver changes the demo ReplicaSet and waits for the controller.
type driver struct {
	cfg          config
	client       kubernetes.Interface
	rsLister     appslisters.ReplicaSetLister
	podLister    corelisters.PodLister
	prog         *progress
	uid          types.UID
	expectations *expectations.Tracker
	phases       []phaseResult
}

type phaseResult struct {
	name     string
	took     time.Duration
	replicas int
}

var podLabels = map[string]string{"app": "reconcilekit-demo"}

func (d *driver) createReplicaSet(ctx context.Context) (*appsv1.ReplicaSet, error) {
	zero := int32(0)
	grace := int64(5)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: d.cfg.name, Namespace: d.cfg.namespace},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        &zero,
			MinReadySeconds: int32(d.cfg.minReady),
			Selector:        &metav1.LabelSelector{MatchLabels: podLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers: []corev1.Container{{
						Name:  "pause",
						Image: "registry.k8s.io/pause:3.10",
					}},
				},
			},
		},
	}
	created, err := d.client.AppsV1().ReplicaSets(d.cfg.namespace).Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the demo ReplicaSet (delete any leftover %s/%s first): %w", d.cfg.namespace, d.cfg.name, err)
	}
	return created, nil
}

func (d *driver) scale(n int) change {
	return func(ctx context.Context) (func() bool, error) {
		patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n)
		rs, err := d.client.AppsV1().ReplicaSets(d.cfg.namespace).Patch(ctx, d.cfg.name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return nil, err
		}
		return func() bool {
			cur, err := d.rsLister.ReplicaSets(d.cfg.namespace).Get(d.cfg.name)
			return err == nil && cur.Generation >= rs.Generation
		}, nil
	}
}

// deletePods deletes n of the ReplicaSet's pods directly, as a user with
// kubectl would, without telling the controller.
func (d *driver) deletePods(n int) change {
	return func(ctx context.Context) (func() bool, error) {
		pods, err := d.podLister.Pods(d.cfg.namespace).List(labels.SelectorFromSet(podLabels))
		if err != nil {
			return nil, err
		}
		slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		var names []string
		for _, p := range pods[:min(n, len(pods))] {
			err := retry(ctx, func(retried bool) error {
				err := d.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
				if retried && apierrors.IsNotFound(err) {
					return nil
				}
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("deleting pod %s: %w", p.Name, err)
			}
			names = append(names, p.Name)
		}
		d.prog.note("deleted %v", names)
		return func() bool {
			for _, name := range names {
				if p, err := d.podLister.Pods(d.cfg.namespace).Get(name); err == nil && p.DeletionTimestamp == nil {
					return false
				}
			}
			return true
		}, nil
	}
}

// createOrphan creates a pod without an owner that matches the selector:
// the controller adopts it and then has one pod too many.
func (d *driver) createOrphan(ctx context.Context) (func() bool, error) {
	rs, err := d.rsLister.ReplicaSets(d.cfg.namespace).Get(d.cfg.name)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: d.cfg.name + "-orphan", Namespace: d.cfg.namespace, Labels: podLabels},
		Spec:       *rs.Spec.Template.Spec.DeepCopy(),
	}
	err = retry(ctx, func(retried bool) error {
		_, err := d.client.CoreV1().Pods(d.cfg.namespace).Create(ctx, pod, metav1.CreateOptions{})
		if retried && apierrors.IsAlreadyExists(err) {
			return nil // an earlier attempt worked after all
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	d.prog.note("created pod %s without an owner", pod.Name)
	seen := false // the controller may adopt and delete it before we look
	return func() bool {
		if _, err := d.podLister.Pods(d.cfg.namespace).Get(pod.Name); err == nil {
			seen = true
		}
		return seen || d.prog.adoptions() > 0
	}, nil
}

// change makes one change to the cluster and returns a predicate that
// reports when the informers have seen it.
type change func(context.Context) (observed func() bool, err error)

// phase applies ch (if any) and waits until the informers have seen it and
// the ReplicaSet reports exactly n replicas, all ready and available,
// nothing terminating, with the status written for its current generation.
func (d *driver) phase(ctx context.Context, name string, n int, ch change) error {
	d.prog.phase(name)
	begin := time.Now()
	observed := func() bool { return true }
	if ch != nil {
		var err error
		if observed, err = ch(ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if observed() {
			if rs, ok := d.converged(n); ok {
				took := time.Since(begin)
				d.phases = append(d.phases, phaseResult{name: name, took: took, replicas: n})
				d.prog.converged(rs, took)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			snap, _ := d.expectations.Snapshot(d.cfg.namespace + "/" + d.cfg.name)
			return fmt.Errorf("%s: not converged (%s; %s): %w", name, d.describe(), snap, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func (d *driver) converged(n int) (*appsv1.ReplicaSet, bool) {
	rs, err := d.rsLister.ReplicaSets(d.cfg.namespace).Get(d.cfg.name)
	if err != nil || rs.UID != d.uid || rs.Spec.Replicas == nil || int(*rs.Spec.Replicas) != n {
		return nil, false
	}
	st := rs.Status
	if st.ObservedGeneration != rs.Generation || int(st.Replicas) != n || int(st.ReadyReplicas) != n ||
		int(st.AvailableReplicas) != n || (st.TerminatingReplicas != nil && *st.TerminatingReplicas != 0) {
		return nil, false
	}
	pods, err := d.podLister.Pods(d.cfg.namespace).List(labels.Everything())
	if err != nil {
		return nil, false
	}
	owned := 0
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != rs.UID {
			if labels.SelectorFromSet(podLabels).Matches(labels.Set(p.Labels)) && ref == nil && podrank.IsActive(p) {
				return nil, false // an orphan still waiting to be adopted
			}
			continue
		}
		if podrank.IsTerminating(p) {
			return nil, false
		}
		if podrank.IsActive(p) {
			owned++
		}
	}
	return rs, owned == n
}

// retry calls fn until it succeeds, up to 5 times (the in-process cluster
// injects faults into the driver's own writes too).
func retry(ctx context.Context, fn func(retried bool) error) error {
	var err error
	for i := range 5 {
		if err = fn(i > 0); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
	return err
}

// describe summarizes what the informers show, for a timeout error.
func (d *driver) describe() string {
	rs, err := d.rsLister.ReplicaSets(d.cfg.namespace).Get(d.cfg.name)
	if err != nil {
		return err.Error()
	}
	pods, _ := d.podLister.Pods(d.cfg.namespace).List(labels.Everything())
	var active, terminating, orphans int
	for _, p := range pods {
		switch ref := metav1.GetControllerOf(p); {
		case ref == nil:
			orphans++
		case ref.UID != rs.UID:
		case podrank.IsActive(p):
			active++
		case podrank.IsTerminating(p):
			terminating++
		}
	}
	st := rs.Status
	term := "nil"
	if st.TerminatingReplicas != nil {
		term = strconv.Itoa(int(*st.TerminatingReplicas))
	}
	return fmt.Sprintf("generation %d, status: observedGeneration %d, replicas %d, ready %d, available %d, terminating %s, %d condition(s); pods: %d active, %d terminating, %d orphans",
		rs.Generation, st.ObservedGeneration, st.Replicas, st.ReadyReplicas, st.AvailableReplicas, term, len(st.Conditions), active, terminating, orphans)
}

// eventCounter counts the controller's events by reason.
type eventCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func newEventCounter() *eventCounter { return &eventCounter{counts: map[string]int{}} }

func (e *eventCounter) add(ev *corev1.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts[ev.Reason]++
}

func (e *eventCounter) snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.counts)
}
