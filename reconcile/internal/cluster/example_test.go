package cluster_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// A create whose response is lost: the API has the pod, the caller saw an
// error, and the informer reports the pod only when its event is delivered.
func Example() {
	c := cluster.New(cluster.Options{Seed: 7})
	c.Informer.Handler = cluster.Handler{OnAdd: func(p *corev1.Pod) { fmt.Println("observed", p.GenerateName+"…") }}
	c.Client.Faults.Create = func(int, *corev1.Pod) cluster.Fault { return cluster.LoseResponse }

	_, err := c.Client.CreatePod(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "web-"},
	})
	fmt.Println("error:", err != nil, "pods in the API:", c.API.Len(), "in the cache:", len(c.Informer.Pods()))
	c.Informer.DeliverAll()
	fmt.Println("in the cache:", len(c.Informer.Pods()), "cache RV:", c.Informer.LastSyncResourceVersion())
	// Output:
	// error: true pods in the API: 1 in the cache: 0
	// observed web-…
	// in the cache: 1 cache RV: 2
}
