package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// crowd is compare's -unrelated: a cluster full of pods that no contender
// manages, created before the contender starts (so its informers list
// them, as an operator installed into a busy cluster does) and, during the
// phases, a background churn of status updates on them (so its informers
// receive their events).
//
// The pods live in a namespace of their own (unrelatedNamespace), carry
// the label role=unrelated (no contender's selector, app=<owner>, matches
// it) and a controller reference to a ConfigMap there, and are bound by
// spec.nodeName to nodes of their own (unrelatedNode) that no one but the
// driver writes: the nodes are not kwok's, tainted NoSchedule so that
// kube-scheduler puts none of the workload's pods on them, and the driver
// writes each pod's status itself — Running and Ready, or Failed for the
// -unrelated-failed share. Nothing else then touches them: kwok manages
// only its own nodes' pods, and the node lifecycle controller's grace
// period (24h with -unrelated) outlasts the run.
type crowd struct {
	pods    int     // -unrelated
	failed  float64 // -unrelated-failed: the share of them Failed
	churn   float64 // -unrelated-churn: status updates a second, 0 none
	timeout time.Duration
}

const (
	unrelatedNamespace = "compare-unrelated"
	unrelatedOwner     = "unrelated-owner" // the ConfigMap that owns them
	unrelatedPerNode   = 1000              // pods bound to one of their nodes
	unrelatedWriters   = 32                // creates and status writes in flight at once
	churnWriters       = 8                 // churn updates in flight at once
	maxUnrelated       = 100000
	maxChurn           = 2000 // updates a second
	churnCondition     = "reconcilekit.dev/Churn"
)

// controllerManagerArgs are the flags of the run's kube-controller-manager
// (the garbage collector and the rest): a node monitor grace period of 1h,
// so that a late kwok heartbeat on busy cores does not mark every pod
// NotReady, and with unrelated pods, 24h, since their nodes have no
// heartbeat after their creation; and a pod garbage collector threshold
// above the Failed unrelated pods (12500 terminated pods by default).
func (cr crowd) controllerManagerArgs() []string {
	if cr.pods == 0 {
		return []string{"--node-monitor-grace-period=1h"}
	}
	return []string{"--node-monitor-grace-period=24h",
		"--terminated-pod-gc-threshold=" + strconv.Itoa(max(12500, cr.failedCount()+1))}
}

// unrelatedNode is the name of the i-th node of the unrelated pods.
func unrelatedNode(i int) string { return fmt.Sprintf("unrelated-node-%d", i) }

// validate checks the flags.
func (cr crowd) validate() error {
	switch {
	case cr.pods < 0 || cr.pods > maxUnrelated:
		return fmt.Errorf("want 0 ≤ -unrelated ≤ %d", maxUnrelated)
	case math.IsNaN(cr.failed) || cr.failed < 0 || cr.failed > 1:
		return errors.New("want 0 ≤ -unrelated-failed ≤ 1")
	case math.IsNaN(cr.churn) || cr.churn < 0 || cr.churn > maxChurn:
		return fmt.Errorf("want 0 ≤ -unrelated-churn ≤ %d/s", maxChurn)
	case cr.pods > 0 && cr.timeout <= 0:
		return errors.New("want -unrelated-timeout > 0")
	}
	return nil
}

// failedCount is how many of the pods are Failed.
func (cr crowd) failedCount() int { return int(math.Round(cr.failed * float64(cr.pods))) }

// isFailed tells whether the i-th pod is one of the Failed: spread evenly
// over the names, as a cluster's would be.
func (cr crowd) isFailed(i int) bool {
	f := cr.failedCount()
	// The i-th pod is Failed when floor((i+1)·f/n) passes floor(i·f/n).
	return (i+1)*f/cr.pods > i*f/cr.pods
}

// nodes is how many nodes the unrelated pods need.
func (cr crowd) nodes() int { return (cr.pods + unrelatedPerNode - 1) / unrelatedPerNode }

// parseRate reads a rate of "N", "N/s" or "N/m" as a count a second.
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	per := 1.0
	if v, ok := strings.CutSuffix(s, "/s"); ok {
		s = v
	} else if v, ok := strings.CutSuffix(s, "/m"); ok {
		s, per = v, 60
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
		return 0, fmt.Errorf("%q is not a rate (N, N/s or N/m, N ≥ 0)", s)
	}
	return n / per, nil
}

// rateFlag is a flag.Value for a rate in updates a second.
type rateFlag struct{ v *float64 }

func (r rateFlag) String() string {
	if r.v == nil {
		return "0/s"
	}
	return strconv.FormatFloat(*r.v, 'f', -1, 64) + "/s"
}

func (r rateFlag) Set(s string) error {
	n, err := parseRate(s)
	if err != nil {
		return err
	}
	*r.v = n
	return nil
}

// crowdResult is what populating took and what the churn did.
type crowdResult struct {
	created, failed int
	took            time.Duration
	churned         int // status updates the churn made during the phases
	churnSkipped    int // updates due while churnWriters were all busy, not sent
	churnFailed     int // updates kube-apiserver refused
}

// populate creates the unrelated pods' namespace, owner and nodes, then
// the pods and their statuses, unrelatedWriters at once, all within
// cr.timeout, and returns the pods' names.
func (cr crowd) populate(ctx context.Context, client kubernetes.Interface, res *crowdResult) ([]string, error) {
	if cr.pods == 0 {
		return nil, nil
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cr.timeout)
	defer cancel()
	fail := func(what string, err error) error {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("unrelated pods: %s: not done within -unrelated-timeout %v (%d created)", what, cr.timeout, res.created)
		}
		return fmt.Errorf("unrelated pods: %s: %w", what, err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unrelatedNamespace}}, metav1.CreateOptions{}); err != nil {
		return nil, fail("namespace", err)
	}
	owner, err := client.CoreV1().ConfigMaps(unrelatedNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: unrelatedOwner}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fail("owner", err)
	}
	now := metav1.Now()
	for i := range cr.nodes() {
		if _, err := client.CoreV1().Nodes().Create(ctx, unrelatedNodeObject(i, now), metav1.CreateOptions{}); err != nil {
			return nil, fail("nodes", err)
		}
	}
	// The ServiceAccount admission plugin refuses pods until the
	// namespace's default ServiceAccount exists.
	if err := poll(ctx, cr.timeout, "the default ServiceAccount of "+unrelatedNamespace, func() bool {
		_, err := client.CoreV1().ServiceAccounts(unrelatedNamespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}); err != nil {
		return nil, fail("service account", err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}
	names := make([]string, cr.pods)
	var created, failed atomic.Int64
	err = forEach(ctx, cr.pods, unrelatedWriters, func(ctx context.Context, i int) error {
		names[i] = fmt.Sprintf("unrelated-%06d", i)
		p, err := client.CoreV1().Pods(unrelatedNamespace).Create(ctx, unrelatedPod(names[i], unrelatedNode(i/unrelatedPerNode), ref), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Add(1)
		p.Status = unrelatedStatus(cr.isFailed(i), p.Spec.Containers[0], now)
		if _, err := client.CoreV1().Pods(unrelatedNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return err
		}
		if cr.isFailed(i) {
			failed.Add(1)
		}
		return nil
	})
	res.created, res.failed, res.took = int(created.Load()), int(failed.Load()), time.Since(t0)
	if err != nil {
		return nil, fail("pods", err)
	}
	return names, nil
}

// unrelatedNodeObject is the i-th node of the unrelated pods: Ready as of
// now, tainted so that kube-scheduler places no pod on it.
func unrelatedNodeObject(i int, now metav1.Time) *corev1.Node {
	name := unrelatedNode(i)
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse(strconv.Itoa(unrelatedPerNode)),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "type": "unrelated"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: "reconcilekit.dev/unrelated", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		}},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Unrelated",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}},
		},
	}
}

// unrelatedPod is one unrelated pod, bound to node and controlled by ref.
func unrelatedPod(name, node string, ref metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Labels:          map[string]string{"role": "unrelated"},
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "work", Image: "registry.k8s.io/pause:3.10"}},
			// Every taint: their nodes' own, and the node lifecycle's
			// should a node ever be marked unreachable.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
	}
}

// unrelatedStatus is the status the driver writes: a container that runs
// and is ready, or one that exited with an error.
func unrelatedStatus(failed bool, c corev1.Container, now metav1.Time) corev1.PodStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image}
	if failed {
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}
		return corev1.PodStatus{
			Phase: corev1.PodFailed, StartTime: &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now},
			},
			ContainerStatuses: []corev1.ContainerStatus{cs},
		}
	}
	cs.Ready, cs.Started = true, ptr.To(true)
	cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
	return corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{cs},
	}
}

// churner updates the unrelated pods' statuses at a steady rate, in turn.
type churner struct {
	sent, skipped, failed atomic.Int64
	stop                  func()
	wg                    sync.WaitGroup
}

// startChurn starts the churn: every 10 ms the updates due at rate (a
// second) are handed to churnWriters writers, each a strategic-merge patch
// of the pod's status that sets the condition churnCondition with a new
// message; an update due while every writer is busy is skipped and
// counted, so the churn never queues up behind a slow kube-apiserver. It
// runs until Stop or the end of ctx.
func startChurn(ctx context.Context, client kubernetes.Interface, names []string, rate float64) *churner {
	ch := &churner{stop: func() {}}
	if rate <= 0 || len(names) == 0 {
		return ch
	}
	// The writers' requests use the caller's ctx, not the churn's: Stop
	// lets an update in flight finish, so that sent counts every update
	// kube-apiserver applied.
	churnCtx, cancel := context.WithCancel(ctx)
	ch.stop = cancel
	work := make(chan int)
	for range churnWriters {
		ch.wg.Go(func() {
			for i := range work {
				patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":"True","reason":"Churn","message":"update %d"}]}}`, churnCondition, i)
				_, err := client.CoreV1().Pods(unrelatedNamespace).Patch(ctx, names[i%len(names)], types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
				switch {
				case err == nil:
					ch.sent.Add(1)
				case ctx.Err() == nil && !apierrors.IsNotFound(err):
					ch.failed.Add(1)
				}
			}
		})
	}
	ch.wg.Go(func() {
		defer close(work)
		t0 := time.Now()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		next := 0
		for {
			select {
			case <-churnCtx.Done():
				return
			case <-tick.C:
			}
			for due := int(time.Since(t0).Seconds() * rate); next < due; next++ {
				select {
				case work <- next:
				default:
					ch.skipped.Add(1)
				}
			}
		}
	})
	return ch
}

// Stop ends the churn and waits for its writers.
func (ch *churner) Stop() {
	ch.stop()
	ch.wg.Wait()
}
