package reconcile_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// recPods is a recording PodControl for the table tests. Faults are injected
// through its function fields, which run outside its lock. It assigns a name
// (GenerateName + sequence) and a resourceVersion to created pods and returns
// a copy. It does not model a cluster: nothing is stored, so deleting a pod
// twice succeeds twice.
type recPods struct {
	// CreateErr, if set, decides the error of the create call with the
	// given 0-based call number.
	CreateErr func(ctx context.Context, pod *corev1.Pod, call int) error
	// DeleteErr, if set, decides the error of deleting pod.
	DeleteErr func(ctx context.Context, pod *corev1.Pod) error

	mu      sync.Mutex
	created []*corev1.Pod // pods as sent, in call order
	deleted []string      // keys of the pods passed to DeletePod
	ctxs    []context.Context
}

var _ reconcile.PodControl = (*recPods)(nil)

func (r *recPods) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	r.mu.Lock()
	call := len(r.created)
	r.created = append(r.created, pod)
	r.ctxs = append(r.ctxs, ctx)
	r.mu.Unlock()
	if r.CreateErr != nil {
		if err := r.CreateErr(ctx, pod, call); err != nil {
			return nil, err
		}
	}
	out := pod.DeepCopy()
	if out.Name == "" {
		out.Name = out.GenerateName + strconv.Itoa(call)
	}
	out.ResourceVersion = strconv.Itoa(100 + call)
	out.UID = types.UID("uid-" + out.Name)
	return out, nil
}

func (r *recPods) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	r.mu.Lock()
	r.deleted = append(r.deleted, reconcile.PodKey(pod))
	r.ctxs = append(r.ctxs, ctx)
	r.mu.Unlock()
	if r.DeleteErr != nil {
		return r.DeleteErr(ctx, pod)
	}
	return nil
}

func (r *recPods) creates() []*corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*corev1.Pod(nil), r.created...)
}

func (r *recPods) deletes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.deleted...)
}

// recRS returns a ReplicaSet "default/web" with UID "uid-web", the given
// replicas and a labelled template.
func recRS(replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"app": "web"},
					Annotations: map[string]string{"note": "x"},
					Finalizers:  []string{"example.com/keep"},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

// recOwned returns n running pods "web-<i>" controlled by rs, with
// distinct creation times (pod i created i seconds after podtest.Epoch).
func recOwned(rs *appsv1.ReplicaSet, n int, opts ...podtest.Option) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		o := append([]podtest.Option{
			podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"),
			podtest.Labels(map[string]string{"app": "web"}),
		}, opts...)
		pods[i] = podtest.New("web-"+strconv.Itoa(i), o...)
		pods[i].CreationTimestamp = metav1.NewTime(podtest.Epoch.Add(time.Duration(i) * time.Second))
	}
	return pods
}

// recNamespaceTerminating is the error the API returns for a create in a
// namespace that is being deleted.
func recNamespaceTerminating() error {
	err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("namespace default is being terminated"))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace default is being terminated", Field: "metadata.namespace",
	})
	return err
}

func recNotFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

// recPending asserts key's pending counters.
func recPending(t *testing.T, m *reconcile.Manager, key string, adds, dels int) {
	t.Helper()
	a, d, ok := m.Tracker().Pending(key)
	require.True(t, ok, "no expectations record for %s", key)
	assert.Equal(t, [2]int{adds, dels}, [2]int{a, d}, "pending (adds, dels) of %s", key)
}

func recKeys(pods []*corev1.Pod) []string {
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = reconcile.PodKey(p)
	}
	return keys
}

// recSeqNames returns a NameGenerator yielding prefix+"0", prefix+"1", ...
func recSeqNames() func(prefix string) string {
	var mu sync.Mutex
	n := 0
	return func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return prefix + strconv.Itoa(n-1)
	}
}
