package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// demoPhase is one phase of the demo as its output announces it ("── name"),
// with kube-apiserver's request counts when it began.
type demoPhase struct {
	name   string
	start  time.Duration // since the demo process started
	counts controlplane.RequestCounts
}

// demoTimeout replaces the demo's own default (50s, ample in process): on a
// busy 2-core machine a real 0 → 1000 can take longer. A -timeout after "--"
// overrides it.
const demoTimeout = "3m"

// runDemo builds the control plane and the examples' replicaset demo, starts
// the control plane, runs the demo against it, prints per-phase times and
// write counts, deletes the demo's ReplicaSets and waits for the garbage
// collector to remove their pods, and stops the control plane.
func runDemo(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var sf startFlags
	sf.register(fs, 5)
	examples := fs.String("examples", "", "the examples module (default: examples/ found above the working directory)")
	namespace := fs.String("namespace", "demo", "namespace created for the demo (passed as -namespace)")
	cleanupTimeout := fs.Duration("cleanup-timeout", 2*time.Minute, "how long to wait for the garbage collector before deleting leftover pods directly")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: controlplane demo [flags] [-- flags of the replicaset demo]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	demoArgs := fs.Args()
	opts, err := sf.options()
	if err != nil {
		return err
	}
	if *examples == "" {
		if *examples, err = findExamples(); err != nil {
			return err
		}
	}
	type step struct {
		name string
		took time.Duration
	}
	var steps []step
	timed := func(name string, f func() error) error {
		t0 := time.Now()
		err := f()
		steps = append(steps, step{name, time.Since(t0)})
		return err
	}

	var bins controlplane.Binaries
	if err := timed("build control plane (cached after the first run)", func() error {
		bins, err = controlplane.Build(ctx, controlplane.BuildOptions{Log: os.Stderr})
		return err
	}); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "reconcilekit-demo-")
	if err != nil {
		return fmt.Errorf("controlplane: demo: %w", err)
	}
	defer os.RemoveAll(tmp)
	demoBin := filepath.Join(tmp, "replicaset")
	if err := timed("build examples/replicaset", func() error {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", demoBin, "./replicaset")
		cmd.Dir, cmd.Stdout, cmd.Stderr = *examples, os.Stderr, os.Stderr
		return cmd.Run()
	}); err != nil {
		return fmt.Errorf("controlplane: demo: building examples/replicaset: %w", err)
	}

	opts.Binaries = &bins
	opts.AuditWrites = true
	var cp *controlplane.ControlPlane
	if err := timed("start control plane", func() error {
		cp, err = controlplane.Start(ctx, opts)
		return err
	}); err != nil {
		return err
	}
	defer cp.Stop()
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fmt.Errorf("controlplane: demo: %w", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *namespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("controlplane: demo: creating namespace %s: %w", *namespace, err)
	}

	before, err := cp.RequestCounts(ctx)
	if err != nil {
		return err
	}
	writesBefore, err := cp.Writes()
	if err != nil {
		return err
	}
	var phases []demoPhase
	var poller *metricsPoller
	var demoErr error
	var demoTook time.Duration
	var demoExited time.Time
	_ = timed("run the demo", func() error {
		t0 := time.Now()
		// The controller serves /metrics on a free port of 127.0.0.1 and
		// says which; the demo's own summary is followed by the metrics'.
		args := []string{"-kubeconfig", cp.KubeconfigPath(), "-namespace", *namespace, "-timeout", demoTimeout, "-metrics-bind-address", "127.0.0.1:0"}
		demoErr = runDemoProcess(ctx, cp, demoBin, append(args, demoArgs...), out, &phases, &poller)
		demoTook = time.Since(t0)
		demoExited = time.Now()
		return demoErr
	})
	if ctx.Err() != nil {
		return fmt.Errorf("controlplane: demo: interrupted (%w); stopping the control plane", errors.Join(ctx.Err(), demoErr))
	}
	after, err := cp.RequestCounts(ctx)
	if err != nil {
		return err
	}
	writesAfter, err := cp.Writes()
	if err != nil {
		return err
	}

	var cleanup string
	cleanupErr := timed("clean up (delete ReplicaSets, garbage collector removes pods)", func() error {
		cleanup, err = cleanUp(ctx, client, *namespace, *cleanupTimeout)
		return err
	})
	afterCleanup, err := cp.RequestCounts(ctx)
	if err != nil {
		return err
	}
	stopErr := timed("stop control plane", cp.Stop)

	fmt.Fprintf(out, "\n── demo-cluster: kube-apiserver %s, etcd %s, kwok %s, %d kwok nodes, kube-controller-manager --controllers=%s\n",
		controlplane.KubernetesVersion, controlplane.EtcdVersion, controlplane.KwokVersion, opts.Nodes, strings.Join(opts.Controllers, ","))
	fmt.Fprintf(out, "steps (wall time):\n")
	for _, s := range steps {
		fmt.Fprintf(out, "  %-62s %7.1fs\n", s.name, s.took.Seconds())
	}
	if len(phases) > 0 {
		fmt.Fprintf(out, "demo phases (time until the next phase began; writes seen by kube-apiserver, all clients):\n")
		for i, p := range phases {
			end, endCounts := demoTook, after // the demo's exit ends the last phase
			if i+1 < len(phases) {
				end, endCounts = phases[i+1].start, phases[i+1].counts
			}
			fmt.Fprintf(out, "  %-40s %7.1fs\n", p.name, (end - p.start).Seconds())
			writeCounts(out, "      ", endCounts.Since(p.counts))
		}
	}
	fmt.Fprintf(out, "kube-apiserver writes during the demo (apiserver_request_total, by status code):\n")
	writeCounts(out, "  ", after.Since(before))
	fmt.Fprintf(out, "the same writes by client (kube-apiserver's audit log; %s is the demo):\n", controlplane.AdminUser)
	writesByUser(out, "  ", writesAfter.Since(writesBefore))
	fmt.Fprintf(out, "during the cleanup: %s\n", cleanup)
	writeCounts(out, "  ", afterCleanup.Since(after))
	if poller != nil {
		poller.summary(out, demoExited)
	}
	return errors.Join(demoErr, cleanupErr, stopErr)
}

// runDemoProcess runs the demo, copying its output and taking a snapshot of
// the request counts whenever it announces a phase; once it announces its
// /metrics, *poller scrapes them until it exits.
func runDemoProcess(ctx context.Context, cp *controlplane.ControlPlane, bin string, args []string, out io.Writer, phases *[]demoPhase, poller **metricsPoller) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("controlplane: demo: %w", err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("controlplane: demo: %w", err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(out, line)
		if url, ok := metricsURL(line); ok && *poller == nil {
			*poller = startMetricsPoller(ctx, url, 250*time.Millisecond)
		}
		if _, name, ok := strings.Cut(line, "── "); ok {
			c, err := cp.RequestCounts(ctx)
			if err == nil {
				*phases = append(*phases, demoPhase{name: strings.TrimSpace(name), start: time.Since(t0), counts: c})
			}
		}
	}
	err = cmd.Wait()
	if *poller != nil {
		(*poller).stop()
	}
	if err != nil {
		return fmt.Errorf("controlplane: demo: examples/replicaset: %w", err)
	}
	return nil
}

// cleanUp deletes every ReplicaSet in the namespace with background
// propagation and waits until the garbage collector (and kwok's delete stage)
// have removed every pod; pods still there after timeout are deleted
// directly. It returns what happened.
func cleanUp(ctx context.Context, client kubernetes.Interface, ns string, timeout time.Duration) (string, error) {
	t0 := time.Now()
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("controlplane: demo cleanup: %w", err)
	}
	initial := len(pods.Items)
	bg := metav1.DeletePropagationBackground
	rss, err := client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("controlplane: demo cleanup: %w", err)
	}
	for _, rs := range rss.Items {
		if err := client.AppsV1().ReplicaSets(ns).Delete(ctx, rs.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
			return "", fmt.Errorf("controlplane: demo cleanup: deleting ReplicaSet %s: %w", rs.Name, err)
		}
	}
	left := initial
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		left = len(pods.Items)
		return left == 0, nil
	})
	if err == nil {
		return fmt.Sprintf("the demo left %d ReplicaSet(s) and %d pod(s); ReplicaSets deleted (background propagation), no pod left after %.1fs", len(rss.Items), initial, time.Since(t0).Seconds()), nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		return "", fmt.Errorf("controlplane: demo cleanup: %w", err)
	}
	return fmt.Sprintf("%d ReplicaSet(s) deleted; the garbage collector left %d of %d pod(s) after %v, deleted directly", len(rss.Items), left, initial, timeout), nil
}

// findExamples walks up from the working directory to the examples module.
func findExamples() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "examples", "replicaset", "main.go")); err == nil {
			return filepath.Join(d, "examples"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("controlplane: demo: no examples/replicaset above %s; use -examples", wd)
		}
	}
}
