package cluster

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

// Kubelet is a crude stand-in for the scheduler and the kubelets: [Kubelet.Step]
// binds pending pods to nodes round-robin, makes them Running and Ready,
// and removes pods whose deletion was requested; [Kubelet.Finish] ends a
// pod's run, as its containers exiting for good would.
//
// The zero Kubelet is not usable (it has no API). It is not safe for
// concurrent use.
type Kubelet struct {
	API *API
	// Nodes is the number of nodes, named "node-0", "node-1", …; <= 0: 1.
	Nodes int

	next int
}

// Step makes every pod that is neither terminating, finished (Succeeded or
// Failed) nor Ready scheduled, Running and Ready (its Ready condition
// transitions at the API clock's now), then finalizes terminating pods
// (see [API.Finalize]). It returns how many pods it made ready and how
// many it removed, in key order.
func (k *Kubelet) Step() (readied, removed int) {
	nodes := max(k.Nodes, 1)
	// Only the pods it changes are copied.
	var pods []*corev1.Pod
	k.API.Each(func(p *corev1.Pod) {
		if p.DeletionTimestamp == nil && !finished(p) && !podutil.IsReady(p) {
			pods = append(pods, p.DeepCopy())
		}
	})
	now := metav1.NewTime(k.API.now())
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			p.Spec.NodeName = "node-" + strconv.Itoa(k.next%nodes)
			k.next++
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = append(withoutReady(p.Status.Conditions), corev1.PodCondition{
			Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now,
		})
		// The pod may have been deleted meanwhile; then there is nothing to do.
		if _, err := k.API.Update(p); err == nil {
			readied++
		}
	}
	return readied, k.API.Finalize()
}

// Finish ends the run of the pod namespace/name for good: a pod whose
// restartPolicy is Never or OnFailure and that sets no
// activeDeadlineSeconds runs to completion (Succeeded); any other pod
// fails (Failed: its deadline passed, or it was evicted, which is how a
// pod whose containers restart can still end). The pod is no longer Ready;
// it stays in the API, as finished pods do until someone deletes them.
// Finish reports the phase, and false when there is no such pod or it is
// terminating or already finished.
func (k *Kubelet) Finish(namespace, name string) (corev1.PodPhase, bool) {
	p, ok := k.API.Get(namespace, name)
	if !ok || p.DeletionTimestamp != nil || finished(p) {
		return "", false
	}
	phase := corev1.PodFailed
	if rp := p.Spec.RestartPolicy; (rp == corev1.RestartPolicyNever || rp == corev1.RestartPolicyOnFailure) && p.Spec.ActiveDeadlineSeconds == nil {
		phase = corev1.PodSucceeded
	}
	p.Status.Phase = phase
	p.Status.Conditions = append(withoutReady(p.Status.Conditions), corev1.PodCondition{
		Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(k.API.now()),
	})
	if _, err := k.API.Update(p); err != nil {
		return "", false
	}
	return phase, true
}

// finished reports whether p has run to its end (Succeeded or Failed).
func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func withoutReady(cs []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range cs {
		if c.Type != corev1.PodReady {
			out = append(out, c)
		}
	}
	return out
}
