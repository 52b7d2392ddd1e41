package migrating_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/slowstart"
	"github.com/reconcilekit/reconcilekit/status"
)

// podControl is the copier's pod client, with reconcile.PodControl's method
// set so that the next step (reconcile.Manager) takes the same value.
type podControl interface {
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	DeletePod(ctx context.Context, pod *corev1.Pod) error
}

// controller is what the copier keeps between syncs.
type controller struct {
	tracker *expectations.Tracker // was *controller.UIDTrackingControllerExpectations
	pods    podControl            // was controller.PodControlInterface
	burst   int                   // was burstReplicas
	clock   expectations.Clock    // upstream reads the wall clock
}

// syncReplicaSet is the copier's sync once the ReplicaSet's pods are listed
// and claimed (not shown): it manages only while the expectations are
// satisfied and returns the status to write, if any.
func (c *controller) syncReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, pods, related []*corev1.Pod) (appsv1.ReplicaSetStatus, bool, error) {
	key := rs.Namespace + "/" + rs.Name
	satisfied := c.tracker.Satisfied(key)
	active := podrank.FilterActive(pods)           // was controller.FilterActivePods
	terminating := podrank.FilterTerminating(pods) // was controller.FilterTerminatingPods
	var manageErr error
	if satisfied && rs.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, rs, active, related)
	}
	next := status.Calculate(rs, active, terminating, manageErr, c.clock.Now(), status.Options{})
	if !status.NeedsUpdate(rs, next) { // updateReplicaSetStatus's skip rule
		return rs.Status, false, manageErr
	}
	return status.ForWrite(rs, next), true, manageErr // observedGeneration set
}

// manageReplicas creates or deletes pods so that len(active) approaches
// rs.Spec.Replicas.
func (c *controller) manageReplicas(ctx context.Context, rs *appsv1.ReplicaSet, active, related []*corev1.Pod) error {
	key := rs.Namespace + "/" + rs.Name
	diff := len(active) - int(*rs.Spec.Replicas)
	switch {
	case diff < 0:
		n := min(-diff, c.burst)
		c.tracker.ExpectCreations(key, n)
		ref := metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
		created, err := slowstart.Run(ctx, n, slowstart.Options{}, func(ctx context.Context, _ int) error {
			_, err := c.pods.CreatePod(ctx, podFromTemplate(rs, ref))
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil // counts as created, as upstream
			}
			return err
		})
		c.tracker.Lower(key, n-created, 0) // failed and never attempted
		return err
	case diff > 0:
		n := min(diff, c.burst)
		// Ranked at the current time, as kube-controller-manager ranks;
		// unlike getPodsToDelete, ForDeletion leaves active's order alone.
		rank := podrank.Options{Now: c.clock.Now()}
		victims := podrank.ForDeletion(active, related, n, rank)
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = p.Namespace + "/" + p.Name
		}
		c.tracker.ExpectDeletions(key, keys)
		// One batch of every victim: all deletes at once, as upstream.
		all := slowstart.Options{InitialBatchSize: len(victims)}
		_, err := slowstart.Run(ctx, len(victims), all, func(ctx context.Context, i int) error {
			err := c.pods.DeletePod(ctx, victims[i])
			if err != nil {
				c.tracker.DeletionObserved(key, keys[i]) // no event will come
			}
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
		return err
	}
	return nil
}

// podFromTemplate builds a new pod of rs.
func podFromTemplate(rs *appsv1.ReplicaSet, ref *metav1.OwnerReference) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       rs.Namespace,
			GenerateName:    rs.Name + "-",
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*ref},
		},
		Spec: t.Spec,
	}
}

// Example runs the migrated sync through a scale-up, the add events that
// satisfy it, a scale-down, its delete events, and a sync with nothing to do.
func Example() {
	ctx := context.Background()
	clock := fixedClock(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	cluster := &fakeCluster{}
	c := &controller{
		tracker: expectations.New(expectations.Options{Clock: clock}),
		pods:    cluster,
		burst:   500,
		clock:   clock,
	}
	key := "default/web"

	// Scale up: one running pod, and a finished one that does not count.
	rs := replicaSet(3)
	pods := []*corev1.Pod{
		pod("web-a", "node-1", corev1.PodRunning),
		pod("web-old", "node-1", corev1.PodSucceeded),
	}
	next, write, err := c.syncReplicaSet(ctx, rs, pods, nil)
	fmt.Println("created:", cluster.creates, "err:", err)
	fmt.Println("status: replicas", next.Replicas, "write", write)
	fmt.Println("satisfied:", c.tracker.Satisfied(key))
	c.tracker.CreationObserved(key) // the informer's add events
	c.tracker.CreationObserved(key)
	fmt.Println("after two add events, satisfied:", c.tracker.Satisfied(key))

	// Scale down to one: the unscheduled pod, then the pending one, go.
	rs = replicaSet(1)
	pods = []*corev1.Pod{
		pod("web-a", "node-1", corev1.PodRunning),
		pod("web-b", "node-2", corev1.PodPending),
		pod("web-c", "", corev1.PodPending),
	}
	_, _, err = c.syncReplicaSet(ctx, rs, pods, pods)
	slices.Sort(cluster.deletes)
	fmt.Println("deleted:", cluster.deletes, "err:", err)
	c.tracker.DeletionObserved(key, "default/web-c")
	c.tracker.DeletionObserved(key, "default/web-c") // counted once
	fmt.Println("after web-c's events, satisfied:", c.tracker.Satisfied(key))
	c.tracker.DeletionObserved(key, "default/web-b")
	fmt.Println("after web-b's, satisfied:", c.tracker.Satisfied(key))

	// Steady state: the status written once, then the write is skipped.
	pods = pods[:1]
	next, write, _ = c.syncReplicaSet(ctx, rs, pods, pods)
	fmt.Println("status: replicas", next.Replicas, "write", write)
	rs.Status = next
	_, write, _ = c.syncReplicaSet(ctx, rs, pods, pods)
	fmt.Println("again: write", write)

	// Output:
	// created: 2 err: <nil>
	// status: replicas 1 write true
	// satisfied: false
	// after two add events, satisfied: true
	// deleted: [web-b web-c] err: <nil>
	// after web-c's events, satisfied: false
	// after web-b's, satisfied: true
	// status: replicas 1 write true
	// again: write false
}

// fixedClock is an expectations.Clock that always answers the same instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// fakeCluster is a podControl that creates and deletes nothing but counts.
type fakeCluster struct {
	mu      sync.Mutex
	creates int
	deletes []string
}

func (f *fakeCluster) CreatePod(_ context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates++
	out := p.DeepCopy()
	out.Name = fmt.Sprintf("%s%d", p.GenerateName, f.creates)
	return out, nil
}

func (f *fakeCluster) DeletePod(_ context.Context, p *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, p.Name)
	return nil
}

// replicaSet returns the ReplicaSet default/web at generation 1.
func replicaSet(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rs-uid", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
}

// pod returns a pod of default/web on node (unscheduled when ""), ready
// when running.
func pod(name, node string, phase corev1.PodPhase) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": "web"},
		},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase},
	}
	if phase == corev1.PodRunning {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}
