package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// A contender is one ReplicaSet controller under comparison, started as a
// process of its own whose API traffic goes through a fault proxy.
type contender struct {
	name     string
	upstream bool     // kube-controller-manager's replicaset-controller, else the examples' controller
	args     []string // extra flags
}

var contenders = []contender{
	{name: "kube-controller-manager v1.37.2", upstream: true},
	{name: "kube-controller-manager, StaleControllerConsistencyReplicaSet=false", upstream: true,
		args: []string{"--feature-gates=StaleControllerConsistencyReplicaSet=false"}},
	{name: "reconcilekit, defaults", args: []string{"-exact=false"}},
	{name: "reconcilekit, TrackCreations + EvidenceFirst", args: []string{"-exact=true"}},
}

// compareConfig is what every run of every contender shares.
type compareConfig struct {
	runs, pods, final, disrupt int
	parallel                   int
	qps                        float64
	burst, workers             int
	phaseTimeout               time.Duration
	fault                      string
	lag, touch, touchEvery     time.Duration
	rsBin                      string
	opts                       controlplane.Options
}

// phase is one step of the workload: set the replicas (or delete pods), then
// wait for a converged status.
type phase struct {
	name    string
	desired int
	disrupt int // pods deleted behind the controller's back
	// lostEvent makes the phase scenario (b): the one pod the controller
	// creates for it is created and deleted while the controller's pod
	// watch is held, and the watch's history is then gone; the time is
	// measured from the watch's release.
	lostEvent bool
}

// measured is what one phase of one run cost.
type measured struct {
	took                                  time.Duration
	creates, deletes, statusWrites, fails int
	cpu                                   time.Duration
}

type runResult struct {
	phases  []measured
	peakRSS int64 // KiB, VmHWM
	extra   int   // most live pods above the desired count in the scale-up phases
}

func runCompare(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var c compareConfig
	var sf startFlags
	sf.register(fs, 0)
	fs.IntVar(&c.runs, "runs", 3, "runs per contender (medians and min–max are printed)")
	fs.IntVar(&c.parallel, "parallel", 1, "runs at once, each on its own control plane (for the long fault scenarios; times and CPU then include the contention)")
	fs.IntVar(&c.pods, "pods", 1000, "replicas to scale up to (10000 for the large variant)")
	fs.IntVar(&c.final, "final", 10, "replicas to scale down to")
	fs.IntVar(&c.disrupt, "disrupt", 5, "pods deleted behind the controller's back at the peak")
	fs.Float64Var(&c.qps, "qps", 100, "client QPS of every contender (--kube-api-qps, rest.Config.QPS)")
	fs.IntVar(&c.burst, "burst", 200, "client burst of every contender (--kube-api-burst, rest.Config.Burst)")
	fs.IntVar(&c.workers, "workers", 5, "sync workers of every contender (--concurrent-replicaset-syncs, -workers)")
	fs.DurationVar(&c.phaseTimeout, "phase-timeout", 5*time.Minute, "give up on a phase that has not converged by then")
	fs.DurationVar(&c.lag, "lag", 5*time.Minute+30*time.Second, "-fault informer-lag: how long the controller's pod watch is delayed during the scale-up")
	fs.DurationVar(&c.touch, "touch", 5*time.Minute+10*time.Second, "-fault informer-lag: when, after the scale-up began, the ReplicaSet is touched (an annotation) to make the controller sync")
	fs.StringVar(&c.fault, "fault", "none", "fault injected between each controller and kube-apiserver: none; informer-lag (the controller's pod watch is delayed by -lag during the scale-up, past the 5-minute expectations expiry, and the ReplicaSet is touched at -touch; kubernetes#129795); lost-creates (the responses of the first 50 pod creates of the scale-up are dropped after the API server applied them); failing-writes (10% of the controller's writes fail with 500, throughout); lost-event (a last phase scales up by one while the controller's pod watch is held; that pod is deleted, and the watch's resume is refused as expired, so the controller lists again and never sees the pod; the ReplicaSet is touched every -touch-every until the controller makes progress)")
	fs.DurationVar(&c.touchEvery, "touch-every", 2*time.Second, "-fault lost-event: how often the ReplicaSet is touched (an annotation) to make the controller sync")
	only := fs.String("contenders", "", "comma-separated indices of the contenders to run (0–3; default all)")
	examples := fs.String("examples", "", "the examples module (default: examples/ found above the working directory)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: controlplane compare [flags]\n\nContenders:\n")
		for i, k := range contenders {
			fmt.Fprintf(fs.Output(), "  %d  %s\n", i, k.name)
		}
		fmt.Fprintf(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if sf.nodes == 0 {
		sf.nodes = max(3, c.pods/500+1) // kwok nodes take 1000 pods each
	}
	if c.runs < 1 || c.parallel < 1 || c.pods < 1 || c.final < 0 || c.final > c.pods || c.disrupt < 0 || c.disrupt > c.pods || c.touchEvery <= 0 {
		return errors.New("controlplane: compare: want -runs ≥ 1, -parallel ≥ 1, -pods ≥ 1, 0 ≤ -final ≤ -pods, 0 ≤ -disrupt ≤ -pods, -touch-every > 0")
	}
	switch c.fault {
	case "none", "lost-creates", "failing-writes", "informer-lag", "lost-event":
	default:
		return fmt.Errorf("controlplane: compare: -fault: unknown fault %q", c.fault)
	}
	chosen := contenders
	if *only != "" {
		chosen = nil
		for _, s := range strings.Split(*only, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || i < 0 || i >= len(contenders) {
				return fmt.Errorf("controlplane: compare: -contenders: %q is not an index 0–%d", s, len(contenders)-1)
			}
			chosen = append(chosen, contenders[i])
		}
	}
	var err error
	if c.opts, err = sf.options(); err != nil {
		return err
	}
	// kwok's pods turn Ready once and stay so only while no one else
	// touches them: the node lifecycle controller marks every pod of a node
	// NotReady when the node's heartbeat is older than this grace period
	// (50 s by default; seen a minute into a 1000-pod run on 2 busy cores),
	// and nothing makes them Ready again. Node health is not what is
	// compared here.
	if c.opts.ExtraArgs == nil {
		c.opts.ExtraArgs = map[string][]string{}
	}
	c.opts.ExtraArgs[controlplane.KubeControllerManager] = append([]string{"--node-monitor-grace-period=1h"},
		c.opts.ExtraArgs[controlplane.KubeControllerManager]...)
	if *examples == "" {
		if *examples, err = findExamples(); err != nil {
			return err
		}
	}
	start := time.Now()
	bins, err := controlplane.Build(ctx, controlplane.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	c.opts.Binaries, c.opts.AuditWrites = &bins, true
	tmp, err := os.MkdirTemp("", "reconcilekit-compare-")
	if err != nil {
		return fmt.Errorf("controlplane: compare: %w", err)
	}
	defer os.RemoveAll(tmp)
	c.rsBin = filepath.Join(tmp, "rscontroller")
	build := exec.CommandContext(ctx, "go", "build", "-o", c.rsBin,
		filepath.Join("..", "test", "controlplane", "e2e", "testdata", "rscontroller", "main.go"))
	build.Dir, build.Stdout, build.Stderr = *examples, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("controlplane: compare: building the examples' controller: %w", err)
	}

	phases := []phase{
		{name: fmt.Sprintf("0 → %d", c.pods), desired: c.pods},
		{name: fmt.Sprintf("delete %d", c.disrupt), desired: c.pods, disrupt: c.disrupt},
		{name: fmt.Sprintf("%d → %d", c.pods, c.final), desired: c.final},
	}
	if c.fault == "lost-event" {
		phases = append(phases, phase{name: fmt.Sprintf("lost event, %d → %d", c.final, c.final+1), desired: c.final + 1, lostEvent: true})
	}
	results, err := runAll(ctx, c, chosen, phases)
	if err != nil {
		return err
	}
	printComparison(out, c, chosen, phases, results, time.Since(start))
	return nil
}

// runAll runs every contender c.runs times, c.parallel runs at once, and
// returns each contender's results. The runs start round-robin over the
// contenders, so that a slow spell of the machine is shared rather than
// landing on one of them. The first error cancels the other runs.
func runAll(ctx context.Context, c compareConfig, chosen []contender, phases []phase) ([][]runResult, error) {
	type job struct{ run, i int }
	jobs := make(chan job)
	results := make([][]runResult, len(chosen))
	for i := range results {
		results[i] = make([]runResult, c.runs)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var workers sync.WaitGroup
	for range c.parallel {
		workers.Go(func() {
			for j := range jobs {
				k := chosen[j.i]
				fmt.Fprintf(os.Stderr, "compare: run %d/%d: %s\n", j.run+1, c.runs, k.name)
				r, err := compareRun(ctx, c, k, phases, fmt.Sprintf("%s, run %d", k.name, j.run+1))
				if err != nil {
					cancel(fmt.Errorf("controlplane: compare: %s, run %d: %w", k.name, j.run+1, err))
					continue
				}
				results[j.i][j.run] = r
			}
		})
	}
feed:
	for run := range c.runs {
		for i := range chosen {
			select {
			case jobs <- job{run, i}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	workers.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return results, nil
}

// compareRun runs the workload once against a fresh control plane.
// label names the run in the progress lines on stderr.
func compareRun(ctx context.Context, c compareConfig, k contender, phases []phase, label string) (runResult, error) {
	cp, err := controlplane.Start(ctx, c.opts)
	if err != nil {
		return runResult{}, err
	}
	defer cp.Stop()
	proxy, kubeconfig, err := cp.FaultProxy(controlplane.ControllerUser)
	if err != nil {
		return runResult{}, err
	}
	var pid int
	if k.upstream {
		pid, err = cp.StartReplicaSetController("replicaset-controller", kubeconfig, append([]string{
			"--kube-api-qps=" + strconv.FormatFloat(c.qps, 'f', -1, 64),
			"--kube-api-burst=" + strconv.Itoa(c.burst),
			"--concurrent-replicaset-syncs=" + strconv.Itoa(c.workers),
		}, k.args...)...)
	} else {
		pid, err = cp.StartProcess("reconcilekit", c.rsBin, append([]string{
			"-kubeconfig=" + kubeconfig, "-quiet",
			"-qps=" + strconv.FormatFloat(c.qps, 'f', -1, 64),
			"-burst=" + strconv.Itoa(c.burst),
			"-workers=" + strconv.Itoa(c.workers),
		}, k.args...)...)
	}
	if err != nil {
		return runResult{}, err
	}
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return runResult{}, err
	}
	const ns, name = "compare", "web"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return runResult{}, err
	}
	w, err := watchLive(ctx, client, ns)
	if err != nil {
		return runResult{}, err
	}
	defer w.stop()
	if _, err := client.AppsV1().ReplicaSets(ns).Create(ctx, compareReplicaSet(name, 0), metav1.CreateOptions{}); err != nil {
		return runResult{}, err
	}
	// The controller is up once it has written the status of generation 1.
	if err := waitConverged(ctx, client, ns, name, 0, 0, w, 2*time.Minute); err != nil {
		return runResult{}, fmt.Errorf("the controller did not take the ReplicaSet up: %w", err)
	}

	switch c.fault {
	case "lost-creates":
		proxy.DropPodCreateResponses(50)
	case "failing-writes":
		if err := proxy.FailWrites(0.1, 500); err != nil {
			return runResult{}, err
		}
	}
	var res runResult
	var lagging sync.WaitGroup
	defer lagging.Wait()
	lagCtx, endLag := context.WithCancel(ctx)
	defer endLag()
	for i, ph := range phases {
		stats0 := proxy.Stats()
		before, err := cp.Writes()
		if err != nil {
			return res, err
		}
		cpu0, err := procCPU(pid)
		if err != nil {
			return res, err
		}
		adds := 0
		w.resetAdds() // before the action: its replacements may come at once
		t0 := time.Now()
		if ph.lostEvent {
			if t0, err = loseEvent(ctx, client, proxy, w, ns, name, ph.desired); err != nil {
				return res, fmt.Errorf("%s: %w", ph.name, err)
			}
			adds = 1 // the controller's replacement of the pod lost
			lagging.Go(func() { touchEvery(lagCtx, client, ns, name, c.touchEvery) })
		} else if ph.disrupt > 0 {
			victims := w.livePods()
			if len(victims) < ph.disrupt {
				return res, fmt.Errorf("%s: only %d live pods", ph.name, len(victims))
			}
			for _, p := range victims[:ph.disrupt] {
				if err := client.CoreV1().Pods(ns).Delete(ctx, p, metav1.DeleteOptions{}); err != nil {
					return res, err
				}
			}
			adds = ph.disrupt
		} else {
			w.setDesired(ph.desired)
			if i == 0 && c.fault == "informer-lag" {
				proxy.SetPodWatchDelay(c.lag)
			}
			if err := scaleReplicaSet(ctx, client, ns, name, ph.desired); err != nil {
				return res, err
			}
			if i == 0 && c.fault == "informer-lag" {
				lagging.Go(func() { lagScenario(lagCtx, client, proxy, ns, name, c.lag, c.touch) })
			}
		}
		timeout := c.phaseTimeout
		if i == 0 && c.fault == "informer-lag" {
			timeout += c.lag
		}
		if ph.lostEvent {
			timeout += expectationsTTL
		}
		if err := waitConverged(ctx, client, ns, name, ph.desired, adds, w, timeout); err != nil {
			return res, fmt.Errorf("%s: %w", ph.name, err)
		}
		took := time.Since(t0)
		fmt.Fprintf(os.Stderr, "compare: %s: %s converged in %v\n", label, ph.name, took.Round(10*time.Millisecond))
		if ph.lostEvent {
			endLag() // stop touching
			if proxy.Stats().PodWatchesExpired == 0 {
				return res, fmt.Errorf("%s: no event was lost: no pod watch of the controller's resumed from before the loss", ph.name)
			}
		}
		cpu1, err := procCPU(pid)
		if err != nil {
			return res, err
		}
		after, err := cp.Writes()
		if err != nil {
			return res, err
		}
		d := after.Since(before)
		u := controlplane.ControllerUser
		m := measured{
			took:         took,
			creates:      d.Sum(u, "create", "pods", "", 0),
			deletes:      d.Sum(u, "delete", "pods", "", 0),
			statusWrites: d.Sum(u, "update", "replicasets", "status", 0),
			cpu:          cpu1 - cpu0,
		}
		for wr, n := range d {
			if wr.User == u && wr.Code >= 400 {
				m.fails += n
			}
		}
		// Writes the proxy failed or whose response it dropped never
		// show as failures in the audit log.
		stats1 := proxy.Stats()
		m.fails += int(stats1.WritesFailed-stats0.WritesFailed) + int(stats1.PodCreateResponsesDropped-stats0.PodCreateResponsesDropped)
		res.phases = append(res.phases, m)
	}
	res.extra = w.maxExtra()
	if res.peakRSS, err = procPeakRSS(pid); err != nil {
		return res, err
	}
	return res, nil
}

// lagScenario touches the ReplicaSet at touch (a sync past the expectations'
// expiry, while the pod watch still lags) and lifts the watch delay at lag.
func lagScenario(ctx context.Context, client kubernetes.Interface, proxy *faultproxy.Proxy, ns, name string, lag, touch time.Duration) {
	t0 := time.Now()
	sleep := func(until time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(t0.Add(until))):
			return true
		}
	}
	if touch < lag && sleep(touch) {
		touchReplicaSet(ctx, client, ns, name)
	}
	sleep(lag)
	proxy.SetPodWatchDelay(0)
}

// expectationsTTL is how long upstream's expectations wait for missed
// events: the longest scenario (b) can take under that policy.
const expectationsTTL = 5 * time.Minute

// loseEvent makes the controller miss a pod for good: with its pod watches
// cut and held, the ReplicaSet is scaled to desired (one more), the pod the
// controller creates is deleted at once, and the watch's history up to
// that deletion is declared gone (a resume from before it is answered 410
// Expired); then the pods added are counted from 0 and the hold is
// released, at the time returned. The controller's informer lists again,
// finds neither the pod nor its deletion, and the controller's expectation
// of that pod's add is never met by an event.
func loseEvent(ctx context.Context, client kubernetes.Interface, proxy *faultproxy.Proxy, w *liveWatch, ns, name string, desired int) (time.Time, error) {
	proxy.HoldPodWatches(true)
	defer proxy.HoldPodWatches(false) // on failure; releasing twice is harmless
	proxy.CutPodWatches()
	before := map[string]bool{}
	for _, p := range w.livePods() {
		before[p] = true
	}
	w.setDesired(desired)
	if err := scaleReplicaSet(ctx, client, ns, name, desired); err != nil {
		return time.Time{}, err
	}
	var victim string
	if err := poll(ctx, time.Minute, "the controller's new pod", func() bool {
		for _, p := range w.livePods() {
			if !before[p] {
				victim = p
				return true
			}
		}
		return false
	}); err != nil {
		return time.Time{}, err
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		return time.Time{}, err
	}
	if err := poll(ctx, time.Minute, "the new pod's deletion", func() bool {
		return !slices.Contains(w.livePods(), victim)
	}); err != nil {
		return time.Time{}, err
	}
	// A list's version is the store's current one, past the deletion.
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return time.Time{}, err
	}
	if err := proxy.ExpirePodWatchesBefore(list.ResourceVersion); err != nil {
		return time.Time{}, err
	}
	w.resetAdds()
	proxy.HoldPodWatches(false)
	return time.Now(), nil
}

// touchEvery touches the ReplicaSet (an annotation) every interval until
// ctx ends, so that the controller syncs it: what any event would do.
func touchEvery(ctx context.Context, client kubernetes.Interface, ns, name string, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		touchReplicaSet(ctx, client, ns, name)
	}
}

// scaleReplicaSet sets the ReplicaSet's spec.replicas.
func scaleReplicaSet(ctx context.Context, client kubernetes.Interface, ns, name string, replicas int) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	_, err := client.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// touchReplicaSet sets an annotation on the ReplicaSet, which makes its controller
// sync it without changing its spec.
func touchReplicaSet(ctx context.Context, client kubernetes.Interface, ns, name string) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcilekit.io/touched":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := client.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "compare: touching the ReplicaSet: %v\n", err)
	}
}

// poll waits, every 50 ms and for at most timeout, until cond holds.
func poll(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not after %v", what, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func compareReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// waitConverged waits until the ReplicaSet's status shows its generation
// with desired replicas, all ready and available, the watch counts desired
// live pods, and at least adds pods were added since the phase began.
func waitConverged(ctx context.Context, client kubernetes.Interface, ns, name string, desired, adds int, w *liveWatch, timeout time.Duration) error {
	last := ""
	err := poll(ctx, timeout, fmt.Sprintf("%d replicas", desired), func() bool {
		rs, err := client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false
		}
		s := rs.Status
		live, added := w.counts()
		d := int32(desired)
		last = fmt.Sprintf("generation %d observed %d, replicas %d ready %d available %d, %d live pods, %d added",
			rs.Generation, s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.AvailableReplicas, live, added)
		return s.ObservedGeneration >= rs.Generation && s.Replicas == d && s.ReadyReplicas == d && s.AvailableReplicas == d &&
			live == desired && added >= adds
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %s", err, last)
	}
	return err
}

// liveWatch follows the namespace's pods straight from kube-apiserver (not
// through the proxy): the live ones (neither terminating nor terminal), how
// many were added since resetAdds, and the most live pods above the desired
// count while the desired count does not go down.
type liveWatch struct {
	stop func()

	mu        sync.Mutex
	live      map[string]bool
	added     int
	desired   int
	scalingUp bool
	extra     int
}

func watchLive(ctx context.Context, client kubernetes.Interface, ns string) (*liveWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &liveWatch{live: map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	update := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		alive := p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
		w.mu.Lock()
		defer w.mu.Unlock()
		if alive {
			w.live[p.Name] = true
		} else {
			delete(w.live, p.Name)
		}
		if w.scalingUp {
			w.extra = max(w.extra, len(w.live)-w.desired)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			w.mu.Lock()
			w.added++
			w.mu.Unlock()
			update(obj)
		},
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				w.mu.Lock()
				delete(w.live, p.Name)
				w.mu.Unlock()
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	w.stop = func() { cancel(); factory.Shutdown() }
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			w.stop()
			return nil, errors.New("the pod watch did not sync")
		}
	}
	return w, nil
}

func (w *liveWatch) setDesired(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.scalingUp = n >= w.desired
	w.desired = n
}

func (w *liveWatch) resetAdds() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.added = 0
}

func (w *liveWatch) counts() (live, added int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.live), w.added
}

func (w *liveWatch) maxExtra() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.extra
}

func (w *liveWatch) livePods() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.live))
	for n := range w.live {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// procCPU is the user and system CPU time pid has used, from /proc/pid/stat
// (clock ticks of 10 ms, USER_HZ = 100 on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("the controller process is gone: %w", err)
	}
	// The command name (field 2) may hold spaces; fields after its ')' are plain.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// procPeakRSS is pid's peak resident set size in KiB (VmHWM).
func procPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("the controller process is gone: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// printComparison prints one Markdown table: per contender and phase the
// median and the min–max over the runs.
func printComparison(out io.Writer, c compareConfig, chosen []contender, phases []phase, results [][]runResult, took time.Duration) {
	fmt.Fprintf(out, "make compare: fault %s; %d run(s) per contender, %d at once, %d pods, %d nodes, client QPS %g burst %d, %d workers; %s; took %v\n\n",
		c.fault, c.runs, c.parallel, c.pods, c.opts.Nodes, c.qps, c.burst, c.workers, time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	fmt.Fprintln(out, "| controller | phase | time to converged status | pod creates | pod deletes | status writes | CPU | peak RSS | most pods above desired | failed writes |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, k := range chosen {
		rs := results[i]
		for j, ph := range phases {
			col := func(f func(measured) float64) []float64 {
				v := make([]float64, len(rs))
				for r := range rs {
					v[r] = f(rs[r].phases[j])
				}
				return v
			}
			rss, extra := "", ""
			if j == 0 {
				rv, ev := make([]float64, len(rs)), make([]float64, len(rs))
				for r := range rs {
					rv[r], ev[r] = float64(rs[r].peakRSS)/1024, float64(rs[r].extra)
				}
				rss, extra = spread(rv, "%.0f MiB"), spread(ev, "%.0f")
			}
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.name, ph.name,
				spread(col(func(m measured) float64 { return m.took.Seconds() }), "%.1f s"),
				spread(col(func(m measured) float64 { return float64(m.creates) }), "%.0f"),
				spread(col(func(m measured) float64 { return float64(m.deletes) }), "%.0f"),
				spread(col(func(m measured) float64 { return float64(m.statusWrites) }), "%.0f"),
				spread(col(func(m measured) float64 { return m.cpu.Seconds() }), "%.2f s"),
				rss, extra,
				spread(col(func(m measured) float64 { return float64(m.fails) }), "%.0f"))
		}
	}
	fmt.Fprintln(out, "\n(median, and min–max over the runs when they differ; peak RSS and pods above desired are per run, shown on the first phase; CPU is the controller process's user+system time from /proc; writes are the controller's own that reached kube-apiserver, from its audit log; failed writes add those the fault proxy failed or whose response it dropped)")
}

// spread formats the median of v, and its range when the values differ.
func spread(v []float64, format string) string {
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	out := fmt.Sprintf(format, med)
	if s[0] != s[len(s)-1] {
		lo, hi := fmt.Sprintf(format, s[0]), fmt.Sprintf(format, s[len(s)-1])
		unit := ""
		if i := strings.IndexByte(lo, ' '); i >= 0 {
			unit, lo, hi = lo[i:], lo[:i], hi[:strings.IndexByte(hi, ' ')]
		}
		out += fmt.Sprintf(" (%s–%s%s)", lo, hi, unit)
	}
	return out
}
