package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// The high-availability faults (-fault leader-kill, leader-pause,
// rolling-restart): each contender runs as two replicas behind a Lease,
// each replica a user of its own behind a fault proxy of its own; the
// leader is stopped haFaultAfter into the 0 → -pods scale-up.
var haFaults = map[string]string{
	"leader-kill":     "SIGKILL",
	"leader-pause":    "SIGSTOP",
	"rolling-restart": "SIGTERM",
}

// Lease timing of every replica: kube-controller-manager's defaults.
const (
	haLease = 15 * time.Second
	haRenew = 10 * time.Second
	haRetry = 2 * time.Second
	// haExitWait bounds the wait for a resumed or SIGTERMed leader to exit
	// by itself (it has lost the lease, or released it).
	haExitWait = haLease + haRenew + 10*time.Second
)

// haFlags are the leader election flags of both contenders' replicas.
func haFlags(k contender, identity string) []string {
	d := func(v time.Duration) string { return v.String() }
	if k.program == upstreamRS {
		return []string{"--leader-elect=true", "--leader-elect-lease-duration=" + d(haLease),
			"--leader-elect-renew-deadline=" + d(haRenew), "--leader-elect-retry-period=" + d(haRetry)}
	}
	return []string{"-leader-elect=true", "-leader-elect-lease-duration=" + d(haLease),
		"-leader-elect-renew-deadline=" + d(haRenew), "-leader-elect-retry-period=" + d(haRetry),
		"-leader-elect-identity=" + identity}
}

// haLeaseOf is the Lease the contender's replicas compete for.
func haLeaseOf(k contender) leaseRef {
	if k.program == upstreamRS {
		return leaseRef{"kube-system", "kube-controller-manager"}
	}
	return leaseRef{"kube-system", "reconcilekit-replicaset"}
}

// haReplicas are the user (and process) names of the contender's two
// replicas; the first is started first and leads.
func haReplicas(k contender) [2]string {
	base := "reconcilekit"
	if k.program == upstreamRS {
		base = "kcm"
	}
	return [2]string{base + "-a", base + "-b"}
}

// haResult is what one run of a high-availability fault measured.
type haResult struct {
	leaseTaken time.Duration // from the leader's stop to the other replica's take of the lease
	handOver   time.Duration // from the leader's stop to the other replica's first write; -1: none
	converge   time.Duration // from the scale-up to the converged status
	extra      int           // most live pods above desired
	oldWrites  int           // leader-pause: the old leader's writes arrived after SIGCONT
	oldCreates int           // … of which pod creates kube-apiserver accepted
	creates    int           // pods added to the namespace since the scale-up (the driver's watch)
	paused     time.Duration // leader-pause: how long the leader was stopped
}

// haRun runs the scale-up once with two replicas of k against a fresh
// control plane and stops the leader as c.fault says.
func haRun(ctx context.Context, c compareConfig, k contender, label string) (haResult, error) {
	replicas := haReplicas(k)
	opts := c.opts
	opts.Users = nil
	for _, r := range replicas {
		opts.Users = append(opts.Users, controlplane.User{Name: r}) // Groups nil: system:masters
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return haResult{}, err
	}
	defer cp.Stop() // resumes a paused replica, then stops every process
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = driverQPS, driverQPS
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return haResult{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return haResult{}, err
	}
	lease := haLeaseOf(k)
	audit := func() ([]controlplane.AuditEvent, error) { return cp.AuditEvents() }
	waitAudit := func(timeout time.Duration, what string, cond func([]controlplane.AuditEvent) bool) error {
		var readErr error
		err := poll(ctx, timeout, what, func() bool {
			evs, err := audit()
			if err != nil {
				readErr = err
				return true
			}
			return cond(evs)
		})
		if readErr != nil {
			return readErr
		}
		return err
	}
	for i, r := range replicas {
		_, kubeconfig, err := cp.FaultProxy(r)
		if err != nil {
			return haResult{}, err
		}
		if _, err := startReplica(cp, c, k, r, kubeconfig); err != nil {
			return haResult{}, err
		}
		// The first replica leads: the second starts once the first holds the lease.
		if i == 0 {
			err = waitAudit(2*time.Minute, r+" holding the lease", func(evs []controlplane.AuditEvent) bool {
				return leaseHolder(evs, lease) == r
			})
		} else {
			err = waitAudit(2*time.Minute, r+" reading the lease", func(evs []controlplane.AuditEvent) bool {
				return touchedLease(evs, lease, r)
			})
		}
		if err != nil {
			return haResult{}, err
		}
	}
	const ns = "compare"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return haResult{}, err
	}
	w, err := watchLive(ctx, client, ns)
	if err != nil {
		return haResult{}, err
	}
	defer w.stop()
	ow, err := watchOwners(ctx, dyn, replicaSets, ns)
	if err != nil {
		return haResult{}, err
	}
	defer ow.stop()
	names := c.ownerNames()
	if _, err = dyn.Resource(replicaSets.gvr).Namespace(ns).Create(ctx, replicaSets.object(names[0], 0, ""), metav1.CreateOptions{}); err == nil {
		err = waitConverged(ctx, ow, w, names, 0, 0, 2*time.Minute)
	}
	if err != nil {
		return haResult{}, fmt.Errorf("the leader did not take the ReplicaSet up: %w", err)
	}

	var res haResult
	w.setDesired(c.pods)
	w.resetAdds()
	start := time.Now()
	if err := replicaSets.scale(ctx, dyn, ns, names[0], c.pods); err != nil {
		return res, err
	}
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(time.Until(start.Add(c.faultAfter))):
	}
	evs, err := audit()
	if err != nil {
		return res, err
	}
	leader := leaseHolder(evs, lease)
	other := replicas[0]
	switch leader {
	case replicas[0]:
		other = replicas[1]
	case replicas[1]:
	default:
		return res, fmt.Errorf("no replica holds the lease %s/%s", lease.namespace, lease.name)
	}
	stopped := time.Now()
	switch c.fault {
	case "leader-kill":
		err = cp.KillComponent(leader)
	case "leader-pause":
		err = cp.Signal(leader, syscall.SIGSTOP)
	default:
		err = cp.Signal(leader, syscall.SIGTERM)
	}
	if err != nil {
		return res, err
	}
	fmt.Fprintf(os.Stderr, "compare: %s: %s sent to the leader %s %v into the scale-up\n", label, haFaults[c.fault], leader, stopped.Sub(start).Round(10*time.Millisecond))
	if err := waitConverged(ctx, ow, w, names, c.pods, 0, c.phaseTimeout+haLease); err != nil {
		return res, fmt.Errorf("0 → %d: %w", c.pods, err)
	}
	res.converge = time.Since(start)
	fmt.Fprintf(os.Stderr, "compare: %s: 0 → %d converged in %v\n", label, c.pods, res.converge.Round(10*time.Millisecond))
	var resumed time.Time
	if c.fault == "leader-pause" {
		s := pauseSchedule{paused: stopped, floor: c.resumeAfter}
		err := waitAudit(c.phaseTimeout, other+" holding the lease, and the floor", func(evs []controlplane.AuditEvent) bool {
			_, holds := leaseTaken(evs, lease, other, stopped)
			return s.resume(time.Now(), holds, true)
		})
		if err != nil {
			return res, err
		}
		resumed = time.Now()
		if err := cp.Signal(leader, syscall.SIGCONT); err != nil {
			return res, err
		}
		res.paused = resumed.Sub(stopped)
		fmt.Fprintf(os.Stderr, "compare: %s: SIGCONT sent to %s after %v\n", label, leader, res.paused.Round(10*time.Millisecond))
	}
	if c.fault != "leader-kill" {
		// A resumed leader exits once it sees it lost the lease; a
		// SIGTERMed one once it has stopped (releasing the lease or not).
		if err := poll(ctx, haExitWait, leader+" exiting", func() bool { return !cp.Running(leader) }); err != nil {
			return res, err
		}
		// What the old leader did on resume is undone by the new one.
		if err := waitConverged(ctx, ow, w, names, c.pods, 0, c.phaseTimeout); err != nil {
			return res, fmt.Errorf("after %s: %w", leader, err)
		}
	}
	time.Sleep(time.Second) // kube-apiserver logs a request after answering it
	if evs, err = audit(); err != nil {
		return res, err
	}
	took, ok := leaseTaken(evs, lease, other, stopped)
	if !ok {
		return res, fmt.Errorf("%s never took the lease", other)
	}
	res.leaseTaken = took.Sub(stopped)
	res.handOver = -1
	if first, ok := firstWrite(evs, other, stopped); ok {
		res.handOver = first.Sub(stopped)
	}
	if !resumed.IsZero() {
		res.oldWrites, res.oldCreates = writesAfter(evs, leader, resumed)
	}
	_, res.creates = w.counts()
	res.extra, _ = w.maxExtra()
	return res, nil
}

// startReplica starts one replica of k as process (and user) name.
func startReplica(cp *controlplane.ControlPlane, c compareConfig, k contender, name, kubeconfig string) (int, error) {
	qps, burst, workers := strconv.FormatFloat(c.qps, 'f', -1, 64), strconv.Itoa(c.burst), strconv.Itoa(c.workers)
	if k.program == upstreamRS {
		args := append([]string{"--kube-api-qps=" + qps, "--kube-api-burst=" + burst, "--concurrent-replicaset-syncs=" + workers},
			haFlags(k, name)...)
		return cp.StartReplicaSetController(name, kubeconfig, append(args, k.args...)...)
	}
	args := append([]string{"-kubeconfig=" + kubeconfig, "-quiet", "-qps=" + qps, "-burst=" + burst, "-workers=" + workers},
		haFlags(k, name)...)
	return cp.StartProcess(name, c.rsBin, append(args, k.args...)...)
}

// printHA prints one Markdown table for the fault: per contender the
// median, and min–max over the runs.
func printHA(out io.Writer, c compareConfig, chosen []contender, results [][]haResult, took time.Duration) {
	fmt.Fprintf(out, "make compare: fault %s (%s to the leader %v into the scale-up); two replicas per contender, lease %v / renew %v / retry %v; %d run(s) per contender, %d at once, 0 → %d pods, %d nodes, client QPS %g burst %d, %d workers; %s; took %v\n\n",
		c.fault, haFaults[c.fault], c.faultAfter, haLease, haRenew, haRetry, c.runs, c.parallel, c.pods, c.opts.Nodes, c.qps, c.burst, c.workers,
		time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	pause := c.fault == "leader-pause"
	head := "| controller | lease taken by the other replica | hand-over (first write of the new leader) | time to converged status | most pods above desired |"
	sep := "|---|---:|---:|---:|---:|"
	if pause {
		head += " paused for | old leader's writes after SIGCONT (pod creates) |"
		sep += "---:|---:|"
	}
	fmt.Fprintln(out, head+" pods created |")
	fmt.Fprintln(out, sep+"---:|")
	for i, k := range chosen {
		rs := results[i]
		col := func(f func(haResult) float64, format string) string {
			v := make([]float64, len(rs))
			for r := range rs {
				v[r] = f(rs[r])
			}
			return spread(v, format)
		}
		handOver := col(func(r haResult) float64 { return r.handOver.Seconds() }, "%.1f s")
		for _, r := range rs {
			if r.handOver < 0 {
				handOver += " (a run with none: the old leader had made every write)"
				break
			}
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", k.name,
			col(func(r haResult) float64 { return r.leaseTaken.Seconds() }, "%.1f s"),
			handOver,
			col(func(r haResult) float64 { return r.converge.Seconds() }, "%.1f s"),
			col(func(r haResult) float64 { return float64(r.extra) }, "%.0f"))
		if pause {
			row += fmt.Sprintf(" %s | %s (%s) |",
				col(func(r haResult) float64 { return r.paused.Seconds() }, "%.1f s"),
				col(func(r haResult) float64 { return float64(r.oldWrites) }, "%.0f"),
				col(func(r haResult) float64 { return float64(r.oldCreates) }, "%.0f"))
		}
		fmt.Fprintln(out, row+" "+col(func(r haResult) float64 { return float64(r.creates) }, "%.0f")+" |")
	}
	notes := []string{
		"median, and min–max over the runs when they differ",
		"times from kube-apiserver's audit log (request arrival) and the driver's clock, one machine",
		"lease taken: the other replica's first successful write of the Lease after the leader was stopped",
		"hand-over: its first write to pods or the ReplicaSet after that",
		"time to converged status: from the scale-up",
		"pods created: the pods added to the namespace since the scale-up, from the driver's own watch (the audit log misses creates cut short by a SIGKILL: kube-apiserver may store the pod and log the request as failed)",
	}
	if pause {
		notes = append(notes, fmt.Sprintf("the leader is resumed once the other replica holds the lease and the ReplicaSet has converged, and no earlier than %v after the pause; its writes after SIGCONT are to pods and the ReplicaSet (and its status), accepted or refused, counted until it has exited", c.resumeAfter))
	}
	fmt.Fprintf(out, "\n(%s)\n", strings.Join(notes, "; "))
}
