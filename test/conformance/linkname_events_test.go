package conformance

import (
	"context"
	_ "unsafe" // go:linkname

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/replicaset"
)

// Pulls of the ReplicaSetController's unexported informer event handlers
// (see linkname_test.go for why and how). Each comment names the upstream
// symbol it binds.

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).addPod
//
//go:linkname upstreamAddPod k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).addPod
func upstreamAddPod(rsc *replicaset.ReplicaSetController, logger klog.Logger, obj interface{})

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).updatePod
//
//go:linkname upstreamUpdatePod k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).updatePod
func upstreamUpdatePod(rsc *replicaset.ReplicaSetController, logger klog.Logger, old, cur interface{})

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).deletePod
//
//go:linkname upstreamDeletePod k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).deletePod
func upstreamDeletePod(rsc *replicaset.ReplicaSetController, logger klog.Logger, obj interface{})

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).addRS
//
//go:linkname upstreamAddRS k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).addRS
func upstreamAddRS(rsc *replicaset.ReplicaSetController, logger klog.Logger, obj interface{})

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).updateRS
//
//go:linkname upstreamUpdateRS k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).updateRS
func upstreamUpdateRS(rsc *replicaset.ReplicaSetController, logger klog.Logger, old, cur interface{})

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).deleteRS
//
//go:linkname upstreamDeleteRS k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).deleteRS
func upstreamDeleteRS(rsc *replicaset.ReplicaSetController, logger klog.Logger, obj interface{})

// k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).processNextWorkItem
//
//go:linkname upstreamProcessNextWorkItem k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).processNextWorkItem
func upstreamProcessNextWorkItem(rsc *replicaset.ReplicaSetController, ctx context.Context) bool
