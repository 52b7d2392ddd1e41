package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	podSetGVR = schema.GroupVersionResource{Group: "demo.reconcilekit.dev", Version: "v1alpha1", Resource: "podsets"}
)

// applyPodSetCRD creates the examples' PodSet CRD (once per control plane)
// and waits until it is established.
func applyPodSetCRD(t *testing.T, ctx context.Context, dyn dynamic.Interface) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "podset", "config", "crd", "demo.reconcilekit.dev_podsets.yaml"))
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &obj))
	crd := &unstructured.Unstructured{Object: obj}
	_, err = dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	waitFor(t, ctx, convergeTimeout, "the PodSet CRD established", func(ctx context.Context) (bool, string, error) {
		got, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("conditions %v", conds), nil
	})
}

func newPodSet(name string, replicas int64) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.reconcilekit.dev/v1alpha1",
		"kind":       "PodSet",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"},
				}},
			},
		},
	}}
}

// podSetWant is a converged PodSet status; failure is the status of its
// ReplicaFailure condition ("" when it must be absent) and reason its reason.
type podSetWant struct {
	replicas, ready, available int64
	failure, reason            string
}

// TestPodSet: the controller-runtime example (examples/podset) against the
// real API server: CRD applied, 0 → 5 under a quota that allows 3 pods (the
// ReplicaFailure condition with reason FailedCreate), the quota removed (5
// pods, condition gone), 5 → 0, and the owner deleted (the garbage collector
// removes the pods, none re-created). The controller runs as a user bound
// to exactly the example's role (examples/podset/config/rbac), which RBAC
// never refuses anything.
func TestPodSet(t *testing.T) {
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, ctx, dyn)
	ns := newNamespace(t, ctx, client)
	pods := watchPods(t, ctx, client, ns)
	_, podset := buildControllers(t)
	kubeconfig := bindRole(t, cp, "podset", applyClusterRole(t, cp, "podset", nil), podSetUser, "")
	metricsAddr, probeAddr := freePort(t), freePort(t)
	ctrl := startProc(t, "podset", podset, "-kubeconfig", kubeconfig,
		"-metrics-bind-address", metricsAddr, "-health-probe-bind-address", probeAddr)
	const owner = "PodSet/web"
	psc := dyn.Resource(podSetGVR).Namespace(ns)

	began := time.Now()
	converge := func(w podSetWant) {
		t.Helper()
		defer func() { t.Logf("%5.1fs: converged to %+v", time.Since(began).Seconds(), w) }()
		waitFor(t, ctx, convergeTimeout, fmt.Sprintf("PodSet %s/web: %+v", ns, w), func(ctx context.Context) (bool, string, error) {
			ps, err := psc.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			st, _, _ := unstructured.NestedMap(ps.Object, "status")
			num := func(f string) int64 { v, _, _ := unstructured.NestedInt64(st, f); return v }
			failure, reason := "", ""
			conds, _, _ := unstructured.NestedSlice(st, "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "ReplicaFailure" {
					failure, reason = fmt.Sprint(m["status"]), fmt.Sprint(m["reason"])
				}
			}
			livePods := len(pods.live(owner))
			ok := num("observedGeneration") == ps.GetGeneration() && num("replicas") == w.replicas &&
				num("readyReplicas") == w.ready && num("availableReplicas") == w.available &&
				num("terminatingReplicas") == 0 && failure == w.failure && (w.reason == "" || reason == w.reason) &&
				livePods == int(w.replicas)
			return ok, fmt.Sprintf("generation %d, status %v, live pods %d", ps.GetGeneration(), st, livePods), nil
		})
	}
	scale := func(n int) {
		t.Helper()
		pods.mu.Lock()
		if n > pods.allowed[owner] {
			pods.allowed[owner] = n
		}
		pods.mu.Unlock()
		_, err := psc.Patch(ctx, "web", types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n), metav1.PatchOptions{})
		require.NoError(t, err)
	}

	pods.allow(owner, 0)
	_, err := psc.Create(ctx, newPodSet("web", 0), metav1.CreateOptions{})
	require.NoError(t, err)
	converge(podSetWant{})

	// A quota of 3 pods: creates beyond it are refused.
	_, err = client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "three-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, convergeTimeout, "the quota's status", func(ctx context.Context) (bool, string, error) {
		q, err := client.CoreV1().ResourceQuotas(ns).Get(ctx, "three-pods", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		_, ok := q.Status.Hard[corev1.ResourcePods]
		return ok, fmt.Sprintf("status %v", q.Status), nil
	})
	scale(5)
	converge(podSetWant{replicas: 3, ready: 3, available: 3, failure: "True", reason: "FailedCreate"})
	require.NoError(t, client.CoreV1().ResourceQuotas(ns).Delete(ctx, "three-pods", metav1.DeleteOptions{}))
	converge(podSetWant{replicas: 5, ready: 5, available: 5})

	scale(0)
	converge(podSetWant{})
	pods.allow(owner, 0)

	scale(4)
	converge(podSetWant{replicas: 4, ready: 4, available: 4})
	before := pods.everOwnedBy(owner)
	require.NoError(t, psc.Delete(ctx, "web", metav1.DeleteOptions{}))
	waitFor(t, ctx, convergeTimeout, "the PodSet and its pods gone", func(ctx context.Context) (bool, string, error) {
		_, err := psc.Get(ctx, "web", metav1.GetOptions{})
		n := len(pods.live(owner))
		return apierrors.IsNotFound(err) && n == 0 && len(pods.all()) == 0, fmt.Sprintf("get: %v; %d live", err, n), nil
	})
	assert.Equal(t, before, pods.everOwnedBy(owner), "pods were created after the PodSet was deleted")
	waitEvent(t, ctx, client, ns, "SuccessfulCreate")
	assertNotRefused(t, cp, podSetUser)

	// The manager serves the controller's metrics beside controller-runtime's
	// own: every pod the watch saw was counted as created, the quota's
	// refusals as failed creates, the scale-down to 0 as 5 deletes (the
	// garbage collector deleted the last 4); /readyz is ok.
	code, body, err := httpGet(ctx, "http://"+probeAddr+"/readyz")
	require.NoError(t, err)
	assert.Equal(t, 200, code, body)
	m := scrape(t, ctx, "http://"+metricsAddr)
	t.Logf("metrics: %s", m.summary())
	ours := map[string]string{"controller": "podset"}
	assert.Equal(t, float64(len(before)), m.sum("reconcilekit_pod_creates_total", map[string]string{"controller": "podset", "result": "created"}))
	assert.Positive(t, m.sum("reconcilekit_pod_creates_total", map[string]string{"controller": "podset", "result": "failed"}), "creates refused by the quota")
	assert.Equal(t, 5.0, m.sum("reconcilekit_pod_deletes_total", map[string]string{"controller": "podset", "result": "deleted"}))
	assert.Positive(t, m.sum("reconcilekit_syncs_total", ours))
	assert.Positive(t, m.sum("controller_runtime_reconcile_total", ours), "controller-runtime's own metrics, same registry")
	assert.False(t, ctrl.exited(), "the controller exited")
}
