package main

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
)

func TestScaleDown(t *testing.T) {
	replicas := int32(3)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	rs.Spec.Replicas = &replicas
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	rs.Spec.Template.Labels = map[string]string{"app": "web"}
	env, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{Objects: []client.Object{rs}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int32{3, 1} {
		patch := client.MergeFrom(rs.DeepCopy())
		rs.Spec.Replicas = &want
		err = env.Client.Patch(t.Context(), rs, patch)
		if err != nil {
			t.Fatal(err)
		}
		err = env.Settle() // every write's events reach the controller: no 5-minute wait
		if err != nil {
			t.Fatal(err)
		}
		pods, err := env.Pods("default")
		if err != nil || len(pods) != int(want) {
			t.Fatalf("%d pods (%v), want %d", len(pods), err, want)
		}
	}
}
