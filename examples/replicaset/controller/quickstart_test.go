package controller_test

// The client-go quick start of the root README, run against the in-process
// cluster: the README shows the code between the markers verbatim.

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	cluster "github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// --- 8< --- client-go quick start
func runReplicaSets(ctx context.Context, client kubernetes.Interface) (*reconcile.Controller[*appsv1.ReplicaSet], error) {
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl, err := reconcile.NewController(clientgo.ReplicaSets(client, factory, nil))
	if err != nil {
		return nil, err
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	pods := factory.Core().V1().Pods().Informer()
	replicaSets := factory.Apps().V1().ReplicaSets().Informer()
	if err := clientgo.Register(ctrl, pods, replicaSets, queue); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	synced := []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced} // no sync before both have synced
	go clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: synced}.Run(ctx, 5)
	return ctrl, nil
}

// --- >8 ---

// Two rounds of creates finish within seconds, so the second round started
// on observed pod events, not on the 5-minute expectations expiry; deleting
// the ReplicaSet leaves nothing remembered for it.
func TestQuickStart(t *testing.T) {
	cl := cluster.New(1, cluster.Faults{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ctrl, err := runReplicaSets(ctx, cl.Clientset)
	require.NoError(t, err)
	rsc, pods := cl.Clientset.AppsV1().ReplicaSets(ns), cl.Clientset.CoreV1().Pods(ns)
	count := func() int {
		list, err := pods.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		return len(list.Items)
	}
	_, err = rsc.Create(t.Context(), newReplicaSet("web", 3), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, func() bool { return count() == 3 }, "first round")
	_, err = rsc.Patch(t.Context(), "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":6}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitFor(t, func() bool { return count() == 6 }, "second round, after the first was observed")
	require.NoError(t, rsc.Delete(t.Context(), "web", metav1.DeleteOptions{}))
	waitFor(t, func() bool { return ctrl.Len() == 0 }, "nothing left for the deleted ReplicaSet")
}

// waitFor polls cond; the bound is a hang guard far below the 5-minute
// expectations expiry, not a timing assertion.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for: %s", what)
}

// The README's quick starts are the code above and the PodSet controller,
// verbatim: what the README shows is what these tests run.
func TestREADMEQuickStartsAreTheTestedCode(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	for _, src := range []struct{ file, name string }{
		{"quickstart_test.go", "client-go quick start"},
		{"../../podset/controller/controller.go", "controller-runtime quick start"},
	} {
		b, err := os.ReadFile(src.file)
		require.NoError(t, err)
		s := string(b)
		start := strings.Index(s, "// --- 8< --- "+src.name)
		require.GreaterOrEqual(t, start, 0, src.name)
		start += strings.Index(s[start:], "\n") + 1
		end := strings.Index(s[start:], "// --- >8 ---")
		require.GreaterOrEqual(t, end, 0, src.name)
		code := strings.Trim(s[start:start+end], "\n")
		assert.Contains(t, string(readme), "```go\n"+code+"\n```", "README %s differs from %s", src.name, src.file)
	}
}
