package ctrlruntime

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// PodControl is the controller-runtime [reconcile.PodClient],
// [reconcile.PodStamper] and [reconcile.PodGetter]:
// it creates, deletes and patches pods through Client, reads them live
// through APIReader, and records an event on the pod's controller for
// every create and delete outcome: FailedCreate (not when the
// namespace is terminating), SuccessfulCreate, FailedDelete (not when the
// pod is already gone) and SuccessfulDelete. Recorder is a
// record.EventRecorder (core/v1 Events, as upstream's and the client-go
// adapter's), which [NewConfig] sets from the manager. Client is required
// (in a manager: mgr.GetClient()); APIReader and Recorder may be nil (no
// live read, no events); Labels, nil by default (upstream), are stamped on
// every pod CreatePod creates, for a pod cache restricted to them
// ([OwnedPods], docs/rules.md ). NewConfig sets all of them. It
// keeps no state and is safe for concurrent use; it never modifies the
// pods passed in (the client is given copies).
//
// DeletePod deletes with a UID precondition and reports a failed
// precondition as NotFound — the same semantics as the client-go adapter,
// for the same reason: the pod chosen from a possibly stale cache is gone if
// another object now holds its name, and that object must not be deleted.
// Upstream deletes by name only.
type PodControl struct {
	Client client.Client
	// APIReader reads pods from the API server, bypassing the cache, for
	// GetPod (in a manager: mgr.GetAPIReader()). Nil: GetPod fails with an
	// error wrapping errors.ErrUnsupported.
	APIReader client.Reader
	Recorder  record.EventRecorder

	// EventPerBatch, beyond upstream, records one SuccessfulCreate event
	// per slow-start batch ("Created 4 pods: a, b, c, d") instead of one
	// per pod, through [PodControl.CreatedBatch]: a scale-up of 10 pods
	// makes 4 events instead of 10. Failure events stay one per pod. False
	// (the zero value) is upstream's one event per pod.
	EventPerBatch bool

	// Labels are added to every pod CreatePod creates (the pod passed in
	// is not modified). A template that sets one of these keys to another
	// value fails the create before any API call (a FailedCreate event and
	// the error). Deliberate difference from upstream, which creates pods
	// with the template's labels only; nil: none added. NewConfig sets
	// them from ConfigOptions.OwnedPods; the map must not be modified
	// while the PodControl is in use.
	Labels map[string]string
}

var (
	_ reconcile.PodClient     = PodControl{}
	_ reconcile.BatchReporter = PodControl{}
	_ reconcile.PodStamper    = PodControl{}
	_ reconcile.PodGetter     = PodControl{}
)

// PodStamp returns Labels, the map CreatePod stamps on every pod it
// creates, whatever the owner (nil: none), for the Controller's checks of
// the owner's selector against the stamp and its restamping of a pod that
// lost it. The map is Labels itself, not a copy: it must not be modified.
func (c PodControl) PodStamp(metav1.Object) map[string]string {
	return c.Labels
}

// GetPod reads the pod namespace/name through APIReader (a live read, no
// cache). A missing pod is an error for which apierrors.IsNotFound holds;
// errors are returned as they are. Without an APIReader it returns an
// error wrapping errors.ErrUnsupported.
func (c PodControl) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if c.APIReader == nil {
		return nil, fmt.Errorf("ctrlruntime: GetPod: PodControl.APIReader is nil: %w", errors.ErrUnsupported)
	}
	pod := &corev1.Pod{}
	if err := c.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// CreatePod creates a copy of pod, with Labels added, and returns it as
// created (name, UID, resourceVersion filled by the API server).
func (c PodControl) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	stamped, err := podops.Stamp(pod, c.Labels)
	if err != nil {
		err = fmt.Errorf("ctrlruntime: CreatePod: %w", err)
		c.event(pod, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return nil, err
	}
	p := stamped.DeepCopy()
	if err := c.Client.Create(ctx, p); err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.event(pod, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		}
		return nil, err
	}
	if !c.EventPerBatch {
		c.event(p, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", p.Name)
	}
	return p, nil
}

// CreatedBatch records, under EventPerBatch only, one SuccessfulCreate
// event for the pods one slow-start batch created, on their controller
// (the Manager calls it, see [reconcile.BatchReporter]). Without
// EventPerBatch it does nothing: CreatePod has recorded one per pod.
func (c PodControl) CreatedBatch(_ context.Context, created []*corev1.Pod) {
	if !c.EventPerBatch || len(created) == 0 {
		return
	}
	c.event(created[0], corev1.EventTypeNormal, "SuccessfulCreate", "%s", podops.BatchMessage(created))
}

// DeletePod deletes pod if the object under its name still has pod.UID; a
// failed precondition is reported as NotFound (see [PodControl]).
func (c PodControl) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	var opts []client.DeleteOption
	if pod.UID != "" {
		uid := pod.UID
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err := podops.PreconditionAsNotFound(pod, c.Client.Delete(ctx, target, opts...))
	switch {
	case apierrors.IsNotFound(err):
		return err
	case err != nil:
		c.event(pod, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
		return err
	}
	c.event(pod, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", pod.Name)
	return nil
}

// PatchPod applies the strategic-merge patch data to a copy of pod
// (adoption and release, R-12.2) and returns the patched pod.
func (c PodControl) PatchPod(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
	p := pod.DeepCopy()
	if err := c.Client.Patch(ctx, p, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return nil, err
	}
	return p, nil
}

func (c PodControl) event(pod *corev1.Pod, eventType, reason, note string, args ...any) {
	ref := metav1.GetControllerOf(pod)
	if c.Recorder == nil || ref == nil {
		return
	}
	owner := &corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Namespace: pod.Namespace}
	c.Recorder.Eventf(owner, eventType, reason, note, args...)
}
