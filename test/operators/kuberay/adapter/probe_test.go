//go:build kuberay

package expectations

// Probes of ours, copied into KubeRay's expectations package before and after
// the swap. Those in the harness's knownDifferences pin a behaviour of
// KubeRay's own store that the adapter deliberately changes: they pass before
// the swap and fail after. The others pin edge cases KubeRay's tests leave
// out, on which both must agree.

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	clientfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestProbeTerminatingPodBlocksDeletion: KubeRay settles an expected
// deletion only when the pod is gone; reconcilekit's Observe also when it is
// terminating, as upstream's event handlers do.
func TestProbeTerminatingPodBlocksDeletion(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "worker", Finalizers: []string{"example.com/hold"},
	}}
	c := clientfake.NewClientBuilder().WithObjects(pod).Build()
	exp := NewRayClusterScaleExpectation(c)
	exp.ExpectScalePod("default", "cluster", "group", "worker", Delete)
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("the pod is not terminating: %v, %v", err, got.DeletionTimestamp)
	}
	if exp.IsSatisfied(ctx, "default", "cluster", "group") {
		t.Error("satisfied while the deleted pod is still terminating")
	}
}

// TestProbeDeleteKeepsOtherClusters: Delete forgets one cluster's groups,
// the head group's (HeadGroup is "") included, and no other cluster's, even
// one whose name starts with the deleted one's.
func TestProbeDeleteKeepsOtherClusters(t *testing.T) {
	ctx := context.Background()
	exp := NewRayClusterScaleExpectation(clientfake.NewClientBuilder().Build())
	for _, cluster := range []string{"a", "ab"} {
		exp.ExpectScalePod("default", cluster, HeadGroup, cluster+"-head", Create)
		exp.ExpectScalePod("default", cluster, "workers", cluster+"-worker", Create)
	}
	exp.Delete("a", "default")
	for _, group := range []string{HeadGroup, "workers"} {
		if !exp.IsSatisfied(ctx, "default", "a", group) {
			t.Errorf("cluster a, group %q: still waiting after Delete", group)
		}
		if exp.IsSatisfied(ctx, "default", "ab", group) {
			t.Errorf("cluster ab, group %q: satisfied after Delete of cluster a", group)
		}
	}
}
