package main

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
)

func TestScaleUpAndDown(t *testing.T) {
	replicas := int32(3)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	env, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{Objects: []client.Object{rs}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{3, 1} {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, want))
		err = env.Client.Patch(t.Context(), rs, patch)
		if err != nil {
			t.Fatal(err)
		}
		err = env.Settle() // the pod events reach the controller: no 5-minute wait
		if err != nil {
			t.Fatal(err)
		}
		pods, err := env.Pods("default")
		if err != nil || len(pods) != want {
			t.Fatalf("%d pods (%v), want %d", len(pods), err, want)
		}
	}
}
