// Package consumer is a scratch client-go user of reconcilekit, built at one
// end of the supported k8s.io range (see go.mod). It is never imported.
//
// test/consumers/floor and test/consumers/newest carry the same
// consumer.go and consumer_test.go and differ only in go.mod (and the newest
// one's resourceversion_test.go, the floor's footprint_test.go, which adopts
// the root module in testdata/operator, a v0.33-era controller-runtime
// operator, and checks what moves in its go.mod); `make compat` checks that,
// tidies, builds and tests both.
package consumer

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// Pods is a reconcile.PodControl over a clientset. client-go's fake
// clientset does not honour GenerateName, so CreatePod names a nameless pod
// itself (prefix plus a sequence number) on a copy, as the API server would.
type Pods struct {
	Client kubernetes.Interface
	seq    atomic.Int64
}

var _ reconcile.PodControl = (*Pods)(nil)

// CreatePod creates pod in its namespace.
func (p *Pods) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if pod.Name == "" && pod.GenerateName != "" {
		pod = pod.DeepCopy()
		pod.Name = fmt.Sprintf("%s%d", pod.GenerateName, p.seq.Add(1))
	}
	return p.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// DeletePod deletes pod by name.
func (p *Pods) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	return p.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
}

// Sync moves rs's pods towards rs.Spec.Replicas with m, then writes rs's
// status if it changed. Pods are listed straight from the API (no informer)
// and every listed pod matching the selector counts as rs's.
func Sync(ctx context.Context, client kubernetes.Interface, m *reconcile.Manager, rs *appsv1.ReplicaSet, now time.Time) (reconcile.Outcome, error) {
	active, _, err := listPods(ctx, client, rs)
	if err != nil {
		return reconcile.Outcome{}, err
	}
	out, manageErr := m.ManageReplicas(ctx, reconcile.ReplicaSetOwner(rs), active, nil)

	active, terminating, err := listPods(ctx, client, rs)
	if err != nil {
		return out, err
	}
	st := status.Calculate(rs, active, terminating, manageErr, now, status.Options{})
	if status.NeedsUpdate(rs, st) {
		cp := rs.DeepCopy()
		cp.Status = status.ForWrite(rs, st)
		if _, err := client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
			return out, fmt.Errorf("consumer: status of %s: %w", rs.Name, err)
		}
	}
	return out, manageErr
}

// listPods returns rs's active and terminating pods.
func listPods(ctx context.Context, client kubernetes.Interface, rs *appsv1.ReplicaSet) (active, terminating []*corev1.Pod, err error) {
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil, nil, fmt.Errorf("consumer: selector of %s: %w", rs.Name, err)
	}
	list, err := client.CoreV1().Pods(rs.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, nil, fmt.Errorf("consumer: pods of %s: %w", rs.Name, err)
	}
	pods := podrank.Pointers(list.Items)
	return podrank.FilterActive(pods), podrank.FilterTerminating(pods), nil
}
