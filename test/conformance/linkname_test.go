package conformance

import (
	"context"
	"time"
	_ "unsafe" // go:linkname

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/replicaset"
)

// Pulls of unexported upstream functions, so that the tests run the real
// v1.37.2 code rather than a copy. They need -ldflags=-checklinkname=0 (the
// Makefile passes it). Each comment names the upstream symbol it binds.

// k8s.io/kubernetes/pkg/controller/replicaset.getPodsToDelete
//
//go:linkname upstreamGetPodsToDelete k8s.io/kubernetes/pkg/controller/replicaset.getPodsToDelete
func upstreamGetPodsToDelete(filteredPods, relatedPods []*corev1.Pod, diff int) []*corev1.Pod

// k8s.io/kubernetes/pkg/controller/replicaset.getPodsRankedByRelatedPodsOnSameNode
//
//go:linkname upstreamRankedByNode k8s.io/kubernetes/pkg/controller/replicaset.getPodsRankedByRelatedPodsOnSameNode
func upstreamRankedByNode(podsToRank, relatedPods []*corev1.Pod) controller.ActivePodsWithRanks

// k8s.io/kubernetes/pkg/controller/replicaset.calculateStatus
//
//go:linkname upstreamCalculateStatus k8s.io/kubernetes/pkg/controller/replicaset.calculateStatus
func upstreamCalculateStatus(rs *appsv1.ReplicaSet, activePods []*corev1.Pod, terminatingPods []*corev1.Pod, manageReplicasErr error, controllerFeatures replicaset.ReplicaSetControllerFeatures, now time.Time) appsv1.ReplicaSetStatus

// k8s.io/kubernetes/pkg/controller/replicaset.updateReplicaSetStatus
//
//go:linkname upstreamUpdateReplicaSetStatus k8s.io/kubernetes/pkg/controller/replicaset.updateReplicaSetStatus
func upstreamUpdateReplicaSetStatus(logger klog.Logger, c appsclient.ReplicaSetInterface, rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus, controllerFeatures replicaset.ReplicaSetControllerFeatures) (*appsv1.ReplicaSet, error)

// k8s.io/kubernetes/pkg/controller/replicaset.slowStartBatch
//
//go:linkname upstreamSlowStartBatch k8s.io/kubernetes/pkg/controller/replicaset.slowStartBatch
func upstreamSlowStartBatch(count int, initialBatchSize int, fn func() error) (int, error)

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).manageReplicas
//
//go:linkname upstreamManageReplicas k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).manageReplicas
func upstreamManageReplicas(rsc *replicaset.ReplicaSetController, ctx context.Context, activePods []*corev1.Pod, rs *appsv1.ReplicaSet) error

// k8s.io/kubernetes/pkg/controller.maxContainerRestarts
//
//go:linkname upstreamMaxContainerRestarts k8s.io/kubernetes/pkg/controller.maxContainerRestarts
func upstreamMaxContainerRestarts(pod *corev1.Pod) (regularRestarts, sidecarRestarts int)

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).getIndirectlyRelatedPods
//
//go:linkname upstreamRelatedPods k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).getIndirectlyRelatedPods
func upstreamRelatedPods(rsc *replicaset.ReplicaSetController, logger klog.Logger, rs *appsv1.ReplicaSet) ([]*corev1.Pod, error)

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).syncReplicaSet
//
//go:linkname upstreamSyncReplicaSet k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).syncReplicaSet
func upstreamSyncReplicaSet(rsc *replicaset.ReplicaSetController, ctx context.Context, key string) error
