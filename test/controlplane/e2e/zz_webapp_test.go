package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

var webAppGVR = schema.GroupVersionResource{Group: "demo.reconcilekit.dev", Version: "v1alpha1", Resource: "webapps"}

// webAppBin is examples/webapp, built once per test binary.
var webAppBin struct {
	once sync.Once
	path string
	err  error
}

func buildWebApp(t *testing.T) string {
	t.Helper()
	webAppBin.once.Do(func() {
		path := filepath.Join(binDir, "webapp")
		cmd := exec.CommandContext(interrupted, "go", "build", "-o", path, "./webapp")
		cmd.Dir = filepath.Join("..", "..", "..", "examples")
		out, err := cmd.CombinedOutput()
		if err != nil {
			webAppBin.err = fmt.Errorf("go build ./webapp: %w\n%s", err, out)
			return
		}
		webAppBin.path = path
	})
	require.NoError(t, webAppBin.err)
	return webAppBin.path
}

// applyWebAppCRD creates the WebApp CRD and waits until it is established.
func applyWebAppCRD(t *testing.T, ctx context.Context, dyn dynamic.Interface) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "webapp", "config", "crd", "demo.reconcilekit.dev_webapps.yaml"))
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &obj))
	crd := &unstructured.Unstructured{Object: obj}
	_, err = dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	waitFor(t, ctx, convergeTimeout, "the WebApp CRD established", func(ctx context.Context) (bool, string, error) {
		got, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("conditions %v", conds), nil
	})
}

// TestWebApp: the operator whose own Reconcile runs the pod step
// (examples/webapp) against the real API server, which validates the
// Service and PodDisruptionBudget it writes and enforces its finalizer:
// 3 pods behind a Service on port 8080 and a PodDisruptionBudget, scaled
// to 1, the Service deleted behind its back made again, then the WebApp
// deleted: the finalizer holds it until the Service and the
// PodDisruptionBudget are gone, and no pod is created after the delete.
// It runs as the API server's admin (RBAC is TestPodSet's subject; the
// WebApp role is checked against its markers in the examples).
func TestWebApp(t *testing.T) {
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyWebAppCRD(t, ctx, dyn)
	ns := newNamespace(t, ctx, client)
	pods := watchPods(t, ctx, client, ns)
	ctrl := startProc(t, "webapp", buildWebApp(t), "-kubeconfig", cp.KubeconfigPath())
	const owner = "WebApp/web"
	apps := dyn.Resource(webAppGVR).Namespace(ns)
	began := time.Now()

	converge := func(replicas int, port int32) {
		t.Helper()
		defer func() { t.Logf("%5.1fs: converged to %d pods, port %d", time.Since(began).Seconds(), replicas, port) }()
		waitFor(t, ctx, convergeTimeout, fmt.Sprintf("WebApp %s/web: %d pods, port %d", ns, replicas, port), func(ctx context.Context) (bool, string, error) {
			app, err := apps.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			ready, _, _ := unstructured.NestedInt64(app.Object, "status", "readyReplicas")
			svc, err := client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, "service: " + err.Error(), nil
			}
			pdb, err := client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, "pdb: " + err.Error(), nil
			}
			n := len(pods.live(owner))
			ok := n == replicas && ready == int64(replicas) && svc.Spec.Ports[0].Port == port &&
				pdb.Spec.MaxUnavailable != nil && len(app.GetFinalizers()) == 1
			return ok, fmt.Sprintf("%d live pods, %d ready, finalizers %v, service ports %v", n, ready, app.GetFinalizers(), svc.Spec.Ports), nil
		})
	}

	pods.allow(owner, 3)
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.reconcilekit.dev/v1alpha1",
		"kind":       "WebApp",
		"metadata":   map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": int64(3),
			"port":     int64(8080),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"},
				}},
			},
		},
	}}
	_, err := apps.Create(ctx, app, metav1.CreateOptions{})
	require.NoError(t, err)
	converge(3, 8080)

	_, err = apps.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	converge(1, 8080)

	svc, err := client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, client.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}))
	waitFor(t, ctx, convergeTimeout, "the Service made again", func(ctx context.Context) (bool, string, error) {
		again, err := client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return again.UID != svc.UID, "the old Service", nil
	})

	before := pods.everOwnedBy(owner)
	require.NoError(t, apps.Delete(ctx, "web", metav1.DeleteOptions{}))
	waitFor(t, ctx, convergeTimeout, "the WebApp, its Service and its PodDisruptionBudget gone", func(ctx context.Context) (bool, string, error) {
		_, appErr := apps.Get(ctx, "web", metav1.GetOptions{})
		_, svcErr := client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		_, pdbErr := client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		gone := apierrors.IsNotFound(appErr) && apierrors.IsNotFound(svcErr) && apierrors.IsNotFound(pdbErr)
		return gone, fmt.Sprintf("webapp: %v; service: %v; pdb: %v", appErr, svcErr, pdbErr), nil
	})
	t.Logf("%5.1fs: deleted", time.Since(began).Seconds())
	assert.Equal(t, before, pods.everOwnedBy(owner), "pods were created after the WebApp was deleted")
	assert.False(t, ctrl.exited(), "the operator exited")
}
