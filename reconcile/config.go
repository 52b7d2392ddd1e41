package reconcile

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

// Object is an owner as a [Controller] sees it: a *appsv1.ReplicaSet or a
// pointer to a custom resource type.
type Object interface {
	metav1.Object
	runtime.Object
}

// Owners reads the owners of one kind: from the caller's informer cache
// (Get, List) and, for the re-check before adoption, from the API server
// (GetLive). Implementations must be safe for concurrent use; the returned
// objects are only read.
type Owners[T Object] interface {
	// Get returns the cached owner namespace/name, or an error for which
	// k8s.io/apimachinery/pkg/api/errors.IsNotFound holds when there is
	// none.
	Get(namespace, name string) (T, error)
	// List returns every cached owner of the namespace.
	List(namespace string) ([]T, error)
	// GetLive reads the owner from the API server, bypassing the cache:
	// once per sync, before the first adoption.
	GetLive(ctx context.Context, namespace, name string) (T, error)
}

// Pods lists pods from the caller's informer cache. Implementations must be
// safe for concurrent use; the pods are the caller's and are never modified.
type Pods interface {
	// List returns every pod of the namespace, in any state.
	List(namespace string) ([]*corev1.Pod, error)
}

// PodPatcher applies a strategic-merge patch to a pod and returns the
// patched pod: the [Controller] adopts and releases pods with it (R-9.5,
// A client-go implementation calls Pods(ns).Patch with
// types.StrategicMergePatchType; a controller-runtime one calls
// client.Patch with client.RawPatch. Errors should be the client's API
// errors: NotFound (and, on release, Invalid) are recognized with
// k8s.io/apimachinery/pkg/api/errors. The pod must not be modified.
type PodPatcher interface {
	PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)
}

// PodPatcherFunc adapts a function to a [PodPatcher].
type PodPatcherFunc func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error)

// PatchPod calls f.
func (f PodPatcherFunc) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	return f(ctx, pod, data)
}

// Config configures a [Controller] for owners of type T. Kind, Describe,
// Owners, Pods, Control, Patcher and WriteStatus are required: NewController
// names the first one missing. The tuning fields' zero values are upstream's
// behaviour. [ReplicaSets] returns a Config with Kind and Describe filled in
// for apps/v1 ReplicaSets.
type Config[T Object] struct {
	// Kind is the owners' group, version and kind: written into the
	// controller ownerRef of created and adopted pods, and compared (the
	// kind only, as upstream, R-12.7) with the controller ownerRef of pods
	// in events. There is no default.
	Kind schema.GroupVersionKind
	// Describe returns the owner facts the Controller acts on: replicas,
	// template, selector, minReadySeconds ([Owner]). Owner.Object and
	// Owner.Kind may be left zero (the Controller fills in the object and
	// Kind); Owner.Key must be empty or OwnerKey(namespace, name). An
	// error makes Sync fail with [ErrTerminal]. It must not modify the
	// owner and must be safe for concurrent use.
	Describe func(owner T) (Owner, error)
	// Owners reads the owners.
	Owners Owners[T]
	// Pods lists pods.
	Pods Pods
	// Control creates and deletes pods.
	Control PodControl
	// Patcher adopts and releases pods.
	Patcher PodPatcher
	// WriteStatus writes owner's status computed from res (the pods are
	// counted, res.ManageErr says whether the manage step failed): for a
	// ReplicaSet, status.Calculate with res.Active, res.Terminating,
	// res.ManageErr and res.Now, then status.NeedsUpdate, status.ForWrite
	// and UpdateStatus. Sync calls it once per sync that reaches the status
	// step and returns its error first. owner is the cached object:
	// do not modify it, write a copy.
	WriteStatus func(ctx context.Context, owner T, res SyncResult) error
	// Related returns the pods whose nodes count towards the deletion rank
	// of owner's pods. It is called only when pods must be deleted;
	// an error is reported in SyncResult.RelatedErr and the deletion uses
	// zero ranks, as upstream. Nil means upstream's rule: the pods, matched
	// by selector, of every owner (Owners.List) whose controller ownerRef
	// has the same UID as owner's, de-duplicated by UID; none for an owner
	// without a controller.
	Related func(ctx context.Context, owner T) ([]*corev1.Pod, error)

	// Clock is the time source of the Controller, its expectations (unless
	// Expectations.Clock is set) and the deletion ranking. Nil: real time.
	Clock Clock
	// BurstReplicas caps the creates, and separately the deletes, of one
	// sync. <= 0 means DefaultBurstReplicas (500).
	BurstReplicas int
	// Ranking configures the choice of pods to delete; its Now is ignored.
	Ranking podrank.Options
	// SlowStart configures the create batches.
	SlowStart slowstart.Options
	// Expectations configures the Controller's expectations Tracker (TTL,
	// policy, cache version, hooks). A nil Clock means Config.Clock.
	Expectations expectations.Options
	// TrackCreations names new pods in the Controller and expects them by
	// pod key (see [Manager].TrackCreations). Beyond upstream, off by
	// default. Turn it on when the API in front of the PodControl ignores
	// GenerateName, as client-go's fake clientset does.
	TrackCreations bool
	// NameGenerator names new pods under TrackCreations (see
	// [Manager].NameGenerator). Nil: the API server's scheme.
	NameGenerator func(prefix string) string
	// Hooks receives metrics-style notifications of the manage step.
	Hooks Hooks
}

// ReplicaSets returns a Config for apps/v1 ReplicaSets with Kind and
// Describe ([ReplicaSetOwner]) filled in; the caller sets the rest.
func ReplicaSets() Config[*appsv1.ReplicaSet] {
	return Config[*appsv1.ReplicaSet]{
		Kind: replicaSetKind,
		Describe: func(rs *appsv1.ReplicaSet) (Owner, error) {
			if rs == nil {
				return Owner{}, errors.New("reconcile: nil ReplicaSet")
			}
			return ReplicaSetOwner(rs), nil
		},
	}
}

// validate names the first required field that is missing.
func (c *Config[T]) validate() error {
	var missing, hint string
	switch {
	case c.Kind.Kind == "" || c.Kind.Version == "":
		missing, hint = "Kind", " (the owners' group, version and kind; there is no default: use ReplicaSets() for apps/v1 ReplicaSets)"
	case c.Describe == nil:
		missing = "Describe"
	case isNilValue(c.Owners):
		missing = "Owners"
	case isNilValue(c.Pods):
		missing = "Pods"
	case isNilValue(c.Control):
		missing = "Control"
	case isNilValue(c.Patcher):
		missing = "Patcher"
	case c.WriteStatus == nil:
		missing = "WriteStatus"
	default:
		return nil
	}
	return fmt.Errorf("reconcile: NewController: Config.%s is required%s", missing, hint)
}
