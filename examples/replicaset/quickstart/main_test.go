package main

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
)

func TestScaleDown(t *testing.T) {
	cl := fakecluster.New(1, fakecluster.Faults{})
	replicaSets := cl.Clientset.AppsV1().ReplicaSets("default")
	go run(t.Context(), cl.Clientset) // returns when the test ends
	replicas := int32(3)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	rs.Spec.Replicas = &replicas
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	rs.Spec.Template.Labels = map[string]string{"app": "web"}
	_, err := replicaSets.Create(t.Context(), rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForPods(t, cl, 3)
	scaleDown := []byte(`{"spec":{"replicas":1}}`)
	_, err = replicaSets.Patch(t.Context(), "web", types.MergePatchType, scaleDown, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForPods(t, cl, 1) // the pod events reach the controller: no 5-minute wait
}

func waitForPods(t *testing.T, cl *fakecluster.Cluster, want int) {
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(10 * time.Millisecond) {
		pods, err := cl.Clientset.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == want {
			return
		}
	}
	t.Fatalf("no %d pods within a minute", want)
}
