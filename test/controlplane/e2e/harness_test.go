package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// The shared control plane serves every scenario that only needs a namespace
// of its own; scenarios that kill a component start a fresh one.
var (
	shared struct {
		once sync.Once
		cp   *controlplane.ControlPlane
		err  error
	}
	bins struct {
		once       sync.Once
		rs, podset string
		err        error
	}
	// running holds what must be stopped when the test binary is interrupted
	// (t.Cleanup does not run then).
	running = struct {
		sync.Mutex
		cps   map[*controlplane.ControlPlane]bool
		procs map[*proc]bool
	}{cps: map[*controlplane.ControlPlane]bool{}, procs: map[*proc]bool{}}
	interrupted, interrupt = context.WithCancel(context.Background())
	// starting counts the Start calls in flight: interrupt makes them fail
	// and stop what they started.
	starting sync.WaitGroup
	binDir   string
)

func stopAll() {
	running.Lock()
	procs, cps := slices.Collect(maps.Keys(running.procs)), slices.Collect(maps.Keys(running.cps))
	running.Unlock()
	for _, p := range procs {
		p.kill()
	}
	for _, cp := range cps {
		_ = cp.Stop()
	}
}

func TestMain(m *testing.M) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		interrupt()
		stopAll()
		starting.Wait()
		stopAll() // any that finished starting meanwhile
		_ = os.RemoveAll(binDir)
		fmt.Fprintf(os.Stderr, "e2e: %v: stopped every controller and control plane\n", s)
		os.Exit(1)
	}()
	dir, err := os.MkdirTemp("", "reconcilekit-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	stopAll()
	_ = os.RemoveAll(binDir)
	os.Exit(code)
}

// testContext ends a minute before the test binary's deadline, so that a slow
// scenario fails with its cleanups run instead of being killed.
func testContext(t *testing.T) context.Context {
	t.Helper()
	d, ok := t.Deadline()
	if !ok {
		d = time.Now().Add(20 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(interrupted, d.Add(-time.Minute))
	t.Cleanup(cancel)
	return ctx
}

func skipIfUnavailable(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, controlplane.ErrUnavailable) && os.Getenv("CI") == "" {
		t.Skipf("control plane binaries cannot be built here (no network?); run make controlplane: %v", err)
	}
}

// sharedControlPlane starts the shared control plane on first use; TestMain
// stops it.
func sharedControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	shared.once.Do(func() {
		shared.cp, shared.err = startControlPlane(interrupted)
		if shared.err == nil {
			// The garbage collector discovers new resources every 30 s:
			// installing the PodSet CRD at once (TestPodSet runs last, from
			// zz_podset_test.go) spares TestPodSet that wait when it deletes
			// a PodSet.
			applyPodSetCRD(t, interrupted, dynamic.NewForConfigOrDie(shared.cp.RESTConfig()))
		}
	})
	skipIfUnavailable(t, shared.err)
	require.NoError(t, shared.err)
	return shared.cp
}

func startControlPlane(ctx context.Context) (*controlplane.ControlPlane, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	starting.Add(1)
	defer starting.Done()
	cp, err := controlplane.Start(ctx, controlplane.Options{Nodes: 5, AuditWrites: true, Users: append(rbacUsers(), haUsers...),
		// Sharded list and watch (KEP-5866, alpha): TestReplicaSetSharded's
		// replicas ask kube-apiserver for their shards' ReplicaSets.
		FeatureGates: map[string]bool{"ShardedListAndWatch": true},
		ExtraArgs: map[string][]string{
			// kwok refreshes its nodes' heartbeats about every 30 s; on a busy
			// machine one can come later than upstream's 50 s grace period, and
			// the node lifecycle controller then marks every pod of the node
			// unready. The scenarios are about the ReplicaSet controller.
			controlplane.KubeControllerManager: {"--node-monitor-grace-period=10m"},
			// As hardened clusters: setting blockOwnerDeletion on a pod's owner
			// reference (every controller reference the examples write) needs
			// update on the owner's finalizers subresource, so the examples'
			// RBAC (rbac_test.go) must grant it.
			controlplane.KubeAPIServer: {"--enable-admission-plugins=OwnerReferencesPermissionEnforcement"},
		}})
	if err != nil {
		return nil, err
	}
	running.Lock()
	running.cps[cp] = true
	running.Unlock()
	return cp, nil
}

// freshControlPlane starts a control plane for this test alone.
func freshControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	cp, err := startControlPlane(testContext(t))
	skipIfUnavailable(t, err)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, cp.Stop())
		running.Lock()
		delete(running.cps, cp)
		running.Unlock()
	})
	return cp
}

// buildControllers builds the examples' controllers once per test binary:
// testdata/rscontroller (examples/replicaset/controller alone, without the
// demo's scenario) and examples/podset, both inside the examples module;
// go's build cache makes a rebuild cheap.
func buildControllers(t *testing.T) (rs, podset string) {
	t.Helper()
	bins.once.Do(func() {
		examples, err := filepath.Abs(filepath.Join("..", "..", "..", "examples"))
		if err != nil {
			bins.err = err
			return
		}
		runner, err := filepath.Abs(filepath.Join("testdata", "rscontroller", "main.go"))
		if err != nil {
			bins.err = err
			return
		}
		rs, podset := filepath.Join(binDir, "rscontroller"), filepath.Join(binDir, "podset")
		for _, args := range [][]string{{"-o", rs, runner}, {"-o", podset, "./podset"}} {
			cmd := exec.CommandContext(interrupted, "go", append([]string{"build"}, args...)...)
			cmd.Dir = examples
			if out, err := cmd.CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("go build %s: %w\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
		bins.rs, bins.podset = rs, podset
	})
	require.NoError(t, bins.err)
	return bins.rs, bins.podset
}

// proc is a controller process started by a test.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *os.File
	done chan struct{}
	err  error
}

// startProc runs bin with args, its output in a file of the test's temp dir
// (shown when the test fails), and stops it (SIGTERM, SIGKILL after 10 s) in
// t.Cleanup.
func startProc(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), name+"-*.log")
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	p := &proc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	running.Lock()
	running.procs[p] = true
	running.Unlock()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s (pid %d) output, last 60 lines:\n%s", name, cmd.Process.Pid, p.tail(60))
		}
		out.Close()
	})
	return p
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // by pid; a no-op once reaped
	<-p.done
	running.Lock()
	delete(running.procs, p)
	running.Unlock()
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	p.kill()
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.out.Name())
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// count counts the lines of the output that contain s.
func (p *proc) count(s string) int {
	b, _ := os.ReadFile(p.out.Name())
	return bytes.Count(b, []byte(s))
}

// countSyncs counts rscontroller's per-sync lines ("sync …") that contain
// s; the controller's own log lines (klog, stderr) are not counted.
func (p *proc) countSyncs(s string) int {
	b, _ := os.ReadFile(p.out.Name())
	n := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("sync ")) && bytes.Contains(line, []byte(s)) {
			n++
		}
	}
	return n
}

// startRSController runs the examples' ReplicaSet controller on namespace ns.
func startRSController(t *testing.T, cp *controlplane.ControlPlane, ns string, args ...string) *proc {
	t.Helper()
	rs, _ := buildControllers(t)
	args = append(append([]string{"-kubeconfig", cp.KubeconfigPath(), "-namespace", ns}, endpointFlags...), args...)
	return startProc(t, "rscontroller", rs, args...)
}

// newNamespace creates a namespace for the test and deletes it afterwards
// (without waiting: the namespace controller finishes it).
func newNamespace(t *testing.T, ctx context.Context, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns.Name, metav1.DeleteOptions{})
	})
	// Pods need the namespace's default ServiceAccount (service-account admission).
	waitFor(t, ctx, 2*time.Minute, "the default ServiceAccount of "+ns.Name, func(ctx context.Context) (bool, string, error) {
		_, err := client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	return ns.Name
}

// waitFor polls cond until it holds or timeout passes; cond describes what
// it last saw, for the failure message.
func waitFor(t *testing.T, ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, seen, err := cond(ctx)
		if ctx.Err() == nil { // not the error of a request cut short by the deadline
			last = seen
		}
		return ok, err
	})
	require.NoError(t, err, "waiting for %s; last seen: %s", what, last)
}
