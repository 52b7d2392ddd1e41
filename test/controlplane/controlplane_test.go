package controlplane_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// EnvTestArgs adds flags to the components of every control plane these
// tests start, as "component=--flag[;component=--flag…]"; used to show that a
// failing run leaves nothing behind (for example kube-apiserver=--no-such-flag).
const EnvTestArgs = "RECONCILEKIT_CONTROLPLANE_TEST_ARGS"

// live holds the running control planes, so that SIGINT or SIGTERM stops them
// before the test binary exits (t.Cleanup does not run then); starting counts
// the Start calls in flight, which interrupted cancels.
var (
	live = struct {
		sync.Mutex
		cps map[*controlplane.ControlPlane]bool
	}{cps: map[*controlplane.ControlPlane]bool{}}
	starting              sync.WaitGroup
	interrupted, stopTest = context.WithCancel(context.Background())
)

func stopLive() int {
	live.Lock()
	defer live.Unlock()
	for cp := range live.cps {
		_ = cp.Stop()
	}
	return len(live.cps)
}

func TestMain(m *testing.M) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		stopTest()      // a Start in flight fails and stops what it started
		n := stopLive() // running control planes
		starting.Wait()
		n += stopLive() // any that finished starting meanwhile
		fmt.Fprintf(os.Stderr, "controlplane tests: %v: stopped %d running control plane(s); starts in flight stopped their own\n", s, n)
		os.Exit(1)
	}()
	os.Exit(m.Run())
}

// testContext ends a minute before the test binary's deadline, so that a slow
// test fails with its cleanups run instead of being killed by the timeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	d, ok := t.Deadline()
	if !ok {
		d = time.Now().Add(10 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(interrupted, d.Add(-time.Minute))
	t.Cleanup(cancel)
	return ctx
}

// logWriter sends the launcher's progress lines to t.Log and to buf.
type logWriter struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func envArgs(t *testing.T) map[string][]string {
	t.Helper()
	v := os.Getenv(EnvTestArgs)
	if v == "" {
		return nil
	}
	out := map[string][]string{}
	for _, kv := range strings.Split(v, ";") {
		name, flag, ok := strings.Cut(kv, "=")
		require.True(t, ok, "%s: want component=--flag, got %q", EnvTestArgs, kv)
		out[name] = append(out[name], flag)
	}
	return out
}

// start starts a control plane for the test, stops it in t.Cleanup and then
// checks that nothing of it is left. It skips the test only when the binaries
// cannot be built for lack of modules (no network) outside CI.
func start(t *testing.T, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	for name, flags := range envArgs(t) {
		if opts.ExtraArgs == nil {
			opts.ExtraArgs = map[string][]string{}
		}
		opts.ExtraArgs[name] = append(opts.ExtraArgs[name], flags...)
	}
	lw := &logWriter{t: t}
	opts.Log = lw
	starting.Add(1)
	cp, err := controlplane.Start(testContext(t), opts)
	if err == nil {
		live.Lock()
		live.cps[cp] = true
		live.Unlock()
	}
	starting.Done()
	skipIfUnavailable(t, err)
	if err != nil {
		assertLeftNothing(t, startedPIDs(lw.String()), nil, removedDir(lw.String()))
	}
	require.NoError(t, err)
	stopAtCleanup(t, cp)
	return cp
}

// stopAtCleanup stops cp (by pid) in t.Cleanup and checks that nothing of it
// is left.
func stopAtCleanup(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	t.Cleanup(func() {
		assert.NoError(t, cp.Stop())
		live.Lock()
		delete(live.cps, cp)
		live.Unlock()
		assertLeftNothing(t, cp.PIDs(), cp.Ports(), cp.Dir())
	})
}

// skipIfUnavailable skips the test when the binaries cannot be built for
// lack of modules (no network, cold module cache), except in CI.
func skipIfUnavailable(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, controlplane.ErrUnavailable) && os.Getenv("CI") == "" {
		t.Skipf("control plane binaries cannot be built here (no network?); run make controlplane: %v", err)
	}
}

var (
	startedRE = regexp.MustCompile(`started \S+ \(pid (\d+)\)`)
	removedRE = regexp.MustCompile(`removing (\S+)`)
)

func startedPIDs(log string) []int {
	var pids []int
	for _, m := range startedRE.FindAllStringSubmatch(log, -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	return pids
}

func removedDir(log string) string {
	if m := removedRE.FindStringSubmatch(log); m != nil {
		return m[1]
	}
	return ""
}

// assertLeftNothing checks that every pid is gone, no port is held by one of
// them and the data directory no longer exists. A freed port may be taken at
// once by another process (a control plane starting beside this one), so a
// port that cannot be bound again fails only if one of pids holds it.
func assertLeftNothing(t *testing.T, pids []int, ports map[string]int, dir string) {
	t.Helper()
	for _, pid := range pids {
		err := syscall.Kill(pid, 0)
		assert.ErrorIs(t, err, syscall.ESRCH, "pid %d still exists", pid)
	}
	for use, port := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			continue
		}
		holders, err := controlplane.PortHolders(port)
		assert.NoError(t, err)
		for _, pid := range holders {
			assert.NotContains(t, pids, pid, "port %d (%s) still held by pid %d", port, use, pid)
		}
	}
	if dir != "" {
		_, err := os.Stat(dir)
		assert.ErrorIs(t, err, os.ErrNotExist, "data directory %s", dir)
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, cond)
	require.NoError(t, err, "waiting for %s", what)
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// The default control plane: kwok nodes become Ready, a pod is scheduled onto
// one and kwok's stages make it Running and Ready and finish its deletion;
// upstream's ReplicaSet controller is off, the garbage collector is on.
func TestStartDefault(t *testing.T) {
	const nodes = 2
	cp := start(t, controlplane.Options{Nodes: nodes, AuditWrites: true})
	ctx := testContext(t)
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)

	nl, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, nl.Items, nodes)
	kwokNodes := map[string]bool{}
	for _, n := range nl.Items {
		assert.Equal(t, "fake", n.Annotations[controlplane.KwokNodeAnnotation], n.Name)
		kwokNodes[n.Name] = true
	}

	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	_, err = pods.Create(ctx, testPod("p"), metav1.CreateOptions{})
	require.NoError(t, err)
	var pod *corev1.Pod
	waitFor(t, ctx, "pod p Running and Ready", func(ctx context.Context) (bool, error) {
		pod, err = pods.Get(ctx, "p", metav1.GetOptions{})
		return err == nil && pod.Status.Phase == corev1.PodRunning && podReady(pod), err
	})
	assert.True(t, kwokNodes[pod.Spec.NodeName], "scheduled on %q", pod.Spec.NodeName)
	assert.NotEmpty(t, pod.Status.PodIP)

	require.NoError(t, pods.Delete(ctx, "p", metav1.DeleteOptions{}))
	waitFor(t, ctx, "pod p gone", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "p", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	checks := controllerChecks(t, ctx, cp)
	assert.NotContains(t, checks, "replicaset-controller", "upstream's ReplicaSet controller must not run")
	assert.True(t, checks["garbage-collector-controller"])

	// A ReplicaSet and a pod it controls: nothing but our own controller would
	// manage it; the garbage collector removes the pod with its owner.
	rs, err := client.AppsV1().ReplicaSets(metav1.NamespaceDefault).Create(ctx, testReplicaSet("rs", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	owned := testPod("rs-owned")
	owned.Labels = rs.Spec.Selector.MatchLabels
	owned.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	_, err = pods.Create(ctx, owned, metav1.CreateOptions{})
	require.NoError(t, err)
	fg := metav1.DeletePropagationForeground
	require.NoError(t, client.AppsV1().ReplicaSets(metav1.NamespaceDefault).Delete(ctx, "rs", metav1.DeleteOptions{PropagationPolicy: &fg}))
	waitFor(t, ctx, "ReplicaSet and its pod removed by the garbage collector", func(ctx context.Context) (bool, error) {
		_, errRS := client.AppsV1().ReplicaSets(metav1.NamespaceDefault).Get(ctx, "rs", metav1.GetOptions{})
		_, errPod := pods.Get(ctx, "rs-owned", metav1.GetOptions{})
		return apierrors.IsNotFound(errRS) && apierrors.IsNotFound(errPod), nil
	})
	pl, err := pods.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, pl.Items, "upstream's ReplicaSet controller created pods")

	counts, err := cp.RequestCounts(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, counts.Sum("POST", "pods", "", "201"), 2.0, "pod creates in apiserver_request_total")

	// The audit log tells the clients apart.
	writes, err := cp.Writes()
	require.NoError(t, err)
	assert.Equal(t, 2, writes.Sum(controlplane.AdminUser, "create", "pods", "", 201), "our pod creates")
	// Pod p was bound and made Running and Ready before the test went on; the
	// ReplicaSet's pod may be deleted by the garbage collector before the
	// scheduler or kwok reach it, so it need not add to these two.
	assert.GreaterOrEqual(t, writes.Sum(controlplane.KubeScheduler, "create", "pods", "binding", 201), 1, "bindings")
	assert.GreaterOrEqual(t, writes.Sum(controlplane.Kwok, "patch", "pods", "status", 200), 1, "kwok's pod stages")
	assert.GreaterOrEqual(t, writes.Sum(controlplane.KubeControllerManager, "delete", "pods", "", 200), 1, "the garbage collector")
	assert.Zero(t, writes.Sum(controlplane.KubeControllerManager, "create", "pods", "", 0), "kube-controller-manager created pods")

	// Stop now (t.Cleanup's Stop is then a no-op) and check what is left.
	require.NoError(t, cp.Stop())
	assertLeftNothing(t, cp.PIDs(), cp.Ports(), cp.Dir())
}

// controllerChecks waits until kube-controller-manager lists its
// controllers' health checks (it registers them all at once) and returns them.
func controllerChecks(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane) map[string]bool {
	t.Helper()
	var checks map[string]bool
	waitFor(t, ctx, "kube-controller-manager's controller health checks", func(ctx context.Context) (bool, error) {
		var err error
		checks, err = cp.HealthChecks(ctx, controlplane.KubeControllerManager)
		return err == nil && len(checks) > 0, nil
	})
	return checks
}

func testReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"rs": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       testPod("x").Spec,
			},
		},
	}
}

// With Controllers {"*"}, kube-controller-manager's own ReplicaSet controller
// runs and, with kwok, brings a ReplicaSet to its ready replicas.
func TestStartWithUpstreamReplicaSetController(t *testing.T) {
	cp := start(t, controlplane.Options{Nodes: 1, Controllers: []string{"*"}})
	ctx := testContext(t)
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	assert.Contains(t, controllerChecks(t, ctx, cp), "replicaset-controller")

	rss := client.AppsV1().ReplicaSets(metav1.NamespaceDefault)
	_, err = rss.Create(ctx, testReplicaSet("up", 3), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, "3 ready and available replicas", func(ctx context.Context) (bool, error) {
		rs, err := rss.Get(ctx, "up", metav1.GetOptions{})
		return err == nil && rs.Status.ObservedGeneration == rs.Generation &&
			rs.Status.ReadyReplicas == 3 && rs.Status.AvailableReplicas == 3, err
	})
}

// Upstream's ReplicaSet controller in a kube-controller-manager of its own,
// as make compare runs it: behind a fault proxy, as ControllerUser, so that
// its writes stand apart; Stop stops it with the rest.
func TestStartReplicaSetControllerOfItsOwn(t *testing.T) {
	cp := start(t, controlplane.Options{Nodes: 1, AuditWrites: true})
	ctx := testContext(t)
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	proxy, kubeconfig, err := cp.FaultProxy(controlplane.ControllerUser)
	require.NoError(t, err)
	pid, err := cp.StartReplicaSetController("rs-only", kubeconfig, "--kube-api-qps=50", "--concurrent-replicaset-syncs=2")
	require.NoError(t, err)
	assert.Contains(t, cp.PIDs(), pid)
	got, ok := cp.PID("rs-only")
	assert.True(t, ok)
	assert.Equal(t, pid, got, "PID finds a started process by its name")
	api, ok := cp.PID(controlplane.KubeAPIServer)
	assert.True(t, ok)
	assert.Contains(t, cp.PIDs(), api, "and a component")
	_, ok = cp.PID("never-started")
	assert.False(t, ok)
	_, err = cp.StartProcess("rs-only", "/bin/true")
	assert.Error(t, err, "a name already started")
	_, err = cp.StartProcess(controlplane.KubeAPIServer, "/bin/true")
	assert.Error(t, err, "a component's name")

	rss := client.AppsV1().ReplicaSets(metav1.NamespaceDefault)
	_, err = rss.Create(ctx, testReplicaSet("own", 3), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, "3 ready and available replicas", func(ctx context.Context) (bool, error) {
		rs, err := rss.Get(ctx, "own", metav1.GetOptions{})
		return err == nil && rs.Status.ObservedGeneration == rs.Generation &&
			rs.Status.ReadyReplicas == 3 && rs.Status.AvailableReplicas == 3, err
	})
	writes, err := cp.Writes()
	require.NoError(t, err)
	assert.Equal(t, 3, writes.Sum(controlplane.ControllerUser, "create", "pods", "", 201), "the controller's creates, as its own user")
	assert.Zero(t, writes.Sum(controlplane.KubeControllerManager, "create", "pods", "", 0), "the main kube-controller-manager created pods")
	assert.Positive(t, proxy.Stats().PodWatches, "its pod watch went through the proxy")
	audit, err := cp.Audit()
	require.NoError(t, err)
	assert.Equal(t, writes, audit.Writes)
	assert.GreaterOrEqual(t, audit.Requests["create"], 3, "its requests by verb: the pod creates at least")
	t.Logf("the controller's requests by verb: %v", audit.Requests)
	// client-go v0.37's informers start with a watch that streams the
	// initial state (WatchListClient), not with a list.
	assert.GreaterOrEqual(t, audit.Requests["watch"], 2, "its pod and ReplicaSet informers' watches, counted while still open")

	require.NoError(t, cp.Stop())
	assertLeftNothing(t, cp.PIDs(), cp.Ports(), cp.Dir())
}

// A component that cannot start makes Start fail with its log's tail, after
// stopping what had been started.
func TestStartFailureReportsLogTail(t *testing.T) {
	lw := &logWriter{t: t}
	starting.Add(1)
	cp, err := controlplane.Start(testContext(t), controlplane.Options{
		Log:       lw,
		ExtraArgs: map[string][]string{controlplane.KubeAPIServer: {"--no-such-flag"}},
	})
	starting.Done()
	skipIfUnavailable(t, err)
	require.Error(t, err)
	assert.Nil(t, cp)
	assert.Contains(t, err.Error(), "kube-apiserver exited")
	assert.Contains(t, err.Error(), "unknown flag: --no-such-flag")
	pids := startedPIDs(lw.String())
	assert.Len(t, pids, 2, "etcd and kube-apiserver")
	assertLeftNothing(t, pids, nil, removedDir(lw.String()))
}

func TestStartRejectsBadOptions(t *testing.T) {
	_, err := controlplane.Start(context.Background(), controlplane.Options{Nodes: -1})
	assert.ErrorContains(t, err, "controlplane: Nodes = -1")
	_, err = controlplane.Start(context.Background(), controlplane.Options{ExtraArgs: map[string][]string{"kubelet": {"--x"}}})
	assert.ErrorContains(t, err, `unknown component "kubelet"`)
}

// A second Build finds every binary in the cache and rebuilds nothing.
func TestBuildReusesCachedBinaries(t *testing.T) {
	ctx := testContext(t)
	first, err := controlplane.Build(ctx, controlplane.BuildOptions{})
	skipIfUnavailable(t, err)
	require.NoError(t, err)
	paths := []string{first.Etcd, first.KubeAPIServer, first.KubeControllerManager, first.KubeScheduler, first.Kwok, first.KwokStages}
	mtimes := make([]time.Time, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		mtimes[i] = fi.ModTime()
	}
	var log bytes.Buffer
	second, err := controlplane.Build(ctx, controlplane.BuildOptions{Log: &log})
	require.NoError(t, err)
	assert.Equal(t, first, second)
	assert.Equal(t, 5, strings.Count(log.String(), ": cached ("), log.String())
	assert.NotContains(t, log.String(), "building")
	for i, p := range paths {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mtimes[i], fi.ModTime(), p)
	}
}

// KillComponent and StartComponent restart kube-apiserver on the same port
// with the same data; the other components reconnect and a new pod becomes
// Running and Ready.
func TestRestartKubeAPIServer(t *testing.T) {
	cp := start(t, controlplane.Options{Nodes: 1})
	ctx := testContext(t)
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	_, err = pods.Create(ctx, testPod("before"), metav1.CreateOptions{})
	require.NoError(t, err)

	// A client through a fault proxy (no fault set) sees what the others see,
	// before and after the restart.
	proxy, kubeconfig, err := cp.FaultProxy(controlplane.AdminUser)
	require.NoError(t, err)
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	assert.Equal(t, proxy.URL(), rc.Host)
	viaProxy := kubernetes.NewForConfigOrDie(rc).CoreV1().Pods(metav1.NamespaceDefault)
	_, err = viaProxy.Get(ctx, "before", metav1.GetOptions{})
	require.NoError(t, err, "through the proxy")

	require.NoError(t, cp.KillComponent(controlplane.KubeAPIServer))
	_, err = pods.Get(ctx, "before", metav1.GetOptions{})
	require.Error(t, err, "kube-apiserver is down")
	require.NoError(t, cp.StartComponent(ctx, controlplane.KubeAPIServer))

	_, err = pods.Get(ctx, "before", metav1.GetOptions{})
	require.NoError(t, err, "the pod survived in etcd")
	_, err = viaProxy.Get(ctx, "before", metav1.GetOptions{})
	require.NoError(t, err, "through the proxy, after the restart")
	w, err := viaProxy.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=before"})
	require.NoError(t, err)
	select { // the pod's ADDED event: a watch without a resourceVersion starts with the current state
	case ev := <-w.ResultChan():
		pod, ok := ev.Object.(*corev1.Pod)
		require.True(t, ok, "event %v", ev)
		assert.Equal(t, "before", pod.Name)
	case <-ctx.Done():
		t.Fatal("no event through the proxy")
	}
	w.Stop()
	assert.Equal(t, int64(1), proxy.Stats().PodWatches)
	_, err = pods.Create(ctx, testPod("after"), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, "pod after Running and Ready", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "after", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && podReady(p), nil
	})
	assert.Len(t, cp.PIDs(), 6, "five components and kube-apiserver's second run")
}
