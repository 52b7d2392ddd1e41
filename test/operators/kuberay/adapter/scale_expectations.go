//go:build kuberay

// Package expectations is KubeRay's controllers/ray/expectations rebuilt on
// reconcilekit's per-pod expectations (perpod.Tracker). The harness in the
// parent directory copies this file over KubeRay's scale_expectations.go,
// without the build constraint above (which keeps it out of reconcilekit's
// own builds), and runs KubeRay's tests; docs/migrating.md walks through it.
package expectations

import (
	"context"
	"time"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HeadGroup is the group of a RayCluster's head pod.
const HeadGroup = ""

// ScaleAction is what ExpectScalePod expects to happen to a pod.
type ScaleAction string

// The two scale actions.
const Create, Delete ScaleAction = "create", "delete"

// ExpectationsTimeout is how long an expected creation blocks its group if
// the pod never shows up; deletions never time out. Read when an expectation
// store is made.
var ExpectationsTimeout = 30 * time.Second

// RayClusterScaleExpectation records the pods a RayCluster's reconcile asked
// to create or delete, per group, until the client's cache shows them done.
type RayClusterScaleExpectation interface {
	ExpectScalePod(namespace, rayClusterName, group, podName string, action ScaleAction)
	IsSatisfied(ctx context.Context, namespace, rayClusterName, group string) bool
	Delete(rayClusterName, namespace string)
}

// NewRayClusterScaleExpectation returns an expectation store that looks pods
// up through c: one Tracker key per group, "namespace/cluster/group".
func NewRayClusterScaleExpectation(c client.Client) RayClusterScaleExpectation {
	return &scale{c, perpod.New(perpod.Options{
		CreationExpiry: ExpectationsTimeout,
		DeletionExpiry: perpod.Never, // KubeRay waits for NotFound, however long
	})}
}

type scale struct {
	c client.Client
	t *perpod.Tracker
}

// ExpectScalePod records one pod. A pod expects one action at a time: a
// later action replaces an earlier one, as in KubeRay's store.
func (s *scale) ExpectScalePod(namespace, rayClusterName, group, podName string, action ScaleAction) {
	key, pod := namespace+"/"+rayClusterName+"/"+group, namespace+"/"+podName
	settle, add := s.t.CreationObserved, s.t.ExpectDeletion
	if action == Create {
		settle, add = s.t.DeletionObserved, s.t.ExpectCreation
	}
	settle(key, pod) // a later action for the pod replaces an earlier one
	add(key, pod)
}

// IsSatisfied looks up the group's pending pods through the client and
// records what it finds. A failed lookup leaves its pod pending, as a failed
// Get does in KubeRay, so Observe's error needs no handling here. Each pod
// is timed from its own ExpectScalePod, as in KubeRay's store.
func (s *scale) IsSatisfied(ctx context.Context, namespace, rayClusterName, group string) bool {
	key := namespace + "/" + rayClusterName + "/" + group
	_, _ = s.t.Observe(key, ctrlruntime.PodLookup(ctx, s.c)) // a failed lookup leaves its pod pending
	return s.t.Satisfied(key)
}

// Delete forgets every group of the cluster; the trailing "/" keeps cluster
// "a" from matching cluster "ab".
func (s *scale) Delete(cluster, ns string) { s.t.DeletePrefix(ns + "/" + cluster + "/") }

// NewFakeRayClusterScaleExpectation returns a store that records nothing and
// is always satisfied.
func NewFakeRayClusterScaleExpectation() RayClusterScaleExpectation { return fakeScale{} }

type fakeScale struct{}

func (fakeScale) ExpectScalePod(_, _, _, _ string, _ ScaleAction)          {}
func (fakeScale) IsSatisfied(context.Context, string, string, string) bool { return true }
func (fakeScale) Delete(_, _ string)                                       {}
