package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
)

// ownerKind is the kind of object a contender reconciles: apps/v1
// ReplicaSets, or the examples' PodSets (the same spec and status fields
// under the names that matter here: replicas, selector, template;
// observedGeneration, replicas, readyReplicas, availableReplicas).
type ownerKind struct {
	kind       string
	apiVersion string
	gvr        schema.GroupVersionResource
}

var (
	replicaSets = ownerKind{kind: "ReplicaSet", apiVersion: "apps/v1",
		gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}}
	podSets = ownerKind{kind: "PodSet", apiVersion: "demo.reconcilekit.dev/v1alpha1",
		gvr: schema.GroupVersionResource{Group: "demo.reconcilekit.dev", Version: "v1alpha1", Resource: "podsets"}}
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// podSetCRD is the examples' PodSet CRD, relative to the examples module.
const podSetCRD = "podset/config/crd/demo.reconcilekit.dev_podsets.yaml"

// object is an owner of this kind named name with replicas pods of one
// pause container, selected by the label app=name. A node other than ""
// is written into the pod template's spec.nodeName, so that its pods are
// bound to that node when created and kube-scheduler has nothing to do.
func (k ownerKind) object(name string, replicas int, node string) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	podSpec := map[string]any{"containers": []any{
		map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"},
	}}
	if node != "" {
		podSpec["nodeName"] = node
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.apiVersion,
		"kind":       k.kind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     podSpec,
			},
		},
	}}
}

// scale sets the owner's spec.replicas.
func (k ownerKind) scale(ctx context.Context, dyn dynamic.Interface, ns, name string, replicas int) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	_, err := dyn.Resource(k.gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// touch sets an annotation on the owner, which makes its controller sync it
// without changing its spec.
func (k ownerKind) touch(ctx context.Context, dyn dynamic.Interface, ns, name string) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcilekit.io/touched":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := dyn.Resource(k.gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "compare: touching %s %s: %v\n", k.kind, name, err)
	}
}

// applyCRD creates the CRD in file and waits, for at most timeout, until it
// is established.
func applyCRD(ctx context.Context, dyn dynamic.Interface, file string, timeout time.Duration) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	crd := &unstructured.Unstructured{Object: obj}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return poll(ctx, timeout, "the CRD "+crd.GetName()+" established", func() bool {
		got, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	})
}

// ownerStatus is what the driver reads of an owner.
type ownerStatus struct {
	generation, observed       int64
	replicas, ready, available int64
}

// at tells whether the status shows the owner's generation with desired
// replicas, all ready and available.
func (s ownerStatus) at(desired int) bool {
	d := int64(desired)
	return s.observed >= s.generation && s.replicas == d && s.ready == d && s.available == d
}

func (s ownerStatus) String() string {
	return fmt.Sprintf("generation %d observed %d, replicas %d ready %d available %d",
		s.generation, s.observed, s.replicas, s.ready, s.available)
}

func statusOf(u *unstructured.Unstructured) ownerStatus {
	num := func(f string) int64 { v, _, _ := unstructured.NestedInt64(u.Object, "status", f); return v }
	return ownerStatus{generation: u.GetGeneration(), observed: num("observedGeneration"),
		replicas: num("replicas"), ready: num("readyReplicas"), available: num("availableReplicas")}
}

// ownerWatch follows the owners of one kind in a namespace straight from
// kube-apiserver (an informer, not through the proxy). Safe for concurrent use.
type ownerWatch struct {
	stop func()

	mu     sync.Mutex
	status map[string]ownerStatus
}

func watchOwners(ctx context.Context, dyn dynamic.Interface, k ownerKind, ns string) (*ownerWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &ownerWatch{status: map[string]ownerStatus{}}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	inf := factory.ForResource(k.gvr).Informer()
	set := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			w.mu.Lock()
			w.status[u.GetName()] = statusOf(u)
			w.mu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				w.mu.Lock()
				delete(w.status, u.GetName())
				w.mu.Unlock()
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	w.stop = func() { cancel(); factory.Shutdown() }
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			w.stop()
			return nil, errors.New("the owner watch did not sync")
		}
	}
	return w, nil
}

// get returns the status of the owner named name, and whether it was seen.
func (w *ownerWatch) get(name string) (ownerStatus, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.status[name]
	return s, ok
}

// forEach calls fn(i) for every i in [0, n), at most workers at once, and
// returns the first error (the calls not yet begun are then skipped).
func forEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
