package ctrlruntimetest_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// newController is the code under test: the Controller built from the
// Config that ctrlruntime.NewConfig fills from a manager in the program,
// and New fills from the fake client here.
func newController(cfg reconcile.Config[*appsv1.ReplicaSet]) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	upstream := reconcile.ReplicaSets()
	cfg.Describe = upstream.Describe
	cfg.Status = upstream.Status
	return reconcile.NewController(cfg)
}

// A scale-up and a scale-down, each settled at once: the pod events of the
// first round reach the Controller, so the second does not wait out the
// expectations' five minutes.
func Example() {
	three := int32(3)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "web-uid"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &three,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
	env, err := ctrlruntimetest.New(newController, ctrlruntimetest.Options{Objects: []client.Object{rs}})
	if err != nil {
		panic(err)
	}
	fmt.Println(env.Settle())
	pods, _ := env.Pods("default")
	fmt.Println(len(pods), "pods")

	scaleDown := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))
	if err := env.Client.Patch(context.Background(), rs, scaleDown); err != nil {
		panic(err)
	}
	fmt.Println(env.Settle())
	pods, _ = env.Pods("default")
	fmt.Println(len(pods), "pod", env.Clock.Since(ctrlruntimetest.DefaultStart))
	// Output:
	// <nil>
	// 3 pods
	// <nil>
	// 1 pod 0s
}
