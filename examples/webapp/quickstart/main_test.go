package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime/ctrlruntimetest"
)

func TestScale(t *testing.T) {
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	prod, err := ctrlruntime.NewProduction(stamp)
	if err != nil {
		t.Fatal(err)
	}
	app := &WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	app.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	app.Spec.Template.Labels = map[string]string{"app": "web"}
	opts := ctrlruntimetest.Options{Scheme: scheme, Objects: []client.Object{app}, Config: ctrlruntime.ConfigOptions{Production: prod}}
	env, err := ctrlruntimetest.New(newController, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int32{3, 1} {
		patch := client.MergeFrom(app.DeepCopyObject().(*WebApp))
		app.Spec.Replicas = want
		err = env.Client.Patch(t.Context(), app, patch)
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
