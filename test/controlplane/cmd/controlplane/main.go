// Command controlplane builds and runs the test control plane of package
// controlplane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok) from the command line.
//
//	controlplane build              build the five binaries into the cache (no-op when cached)
//	controlplane up [flags]         start a control plane, print its kubeconfig path, run until SIGINT/SIGTERM
//	controlplane demo [flags] [-- demo flags]
//	                                run the examples' ReplicaSet demo against a fresh control plane,
//	                                print per-phase times and kube-apiserver's write counts, clean up
//	controlplane compare [flags]    the same workload (one owner, or -owners N in one namespace) under
//	                                upstream's ReplicaSet controller (its own kube-controller-manager)
//	                                and the examples' client-go and controller-runtime controllers, each
//	                                behind a fault proxy on a fresh control plane per run; one table
//	                                (make compare)
//
// Every process it starts is stopped, by pid, on exit, also on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

const usage = `Usage:
  controlplane build
  controlplane up [flags]
  controlplane demo [flags] [-- flags of the replicaset demo]
  controlplane compare [flags]

Run "controlplane up -h", "controlplane demo -h" or "controlplane compare -h" for the flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	// The first SIGINT or SIGTERM cancels ctx; every command then stops what
	// it started before returning.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(ctx, os.Args[2:])
	case "up":
		err = runUp(ctx, os.Args[2:])
	case "demo":
		err = runDemo(ctx, os.Args[2:], os.Stdout)
	case "compare":
		err = runCompare(ctx, os.Args[2:], os.Stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "controlplane: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func runBuild(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	t0 := time.Now()
	bins, err := controlplane.Build(ctx, controlplane.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	fmt.Printf("etcd                     %s\nkube-apiserver           %s\nkube-controller-manager  %s\nkube-scheduler           %s\nkwok                     %s\nkwok stages              %s\n",
		bins.Etcd, bins.KubeAPIServer, bins.KubeControllerManager, bins.KubeScheduler, bins.Kwok, bins.KwokStages)
	fmt.Printf("build: %.1fs\n", time.Since(t0).Seconds())
	return nil
}

// startFlags are the Options flags shared by up and demo.
type startFlags struct {
	nodes        int
	controllers  string
	noKCM        bool
	noScheduler  bool
	featureGates string
	args         multiFlag
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func (s *startFlags) register(fs *flag.FlagSet, nodes int) {
	fs.IntVar(&s.nodes, "nodes", nodes, "number of kwok nodes")
	fs.StringVar(&s.controllers, "controllers", strings.Join(controlplane.DefaultControllers, ","), "kube-controller-manager --controllers (\"*\" runs upstream's ReplicaSet controller too)")
	fs.BoolVar(&s.noKCM, "no-controller-manager", false, "do not run kube-controller-manager")
	fs.BoolVar(&s.noScheduler, "no-scheduler", false, "do not run kube-scheduler")
	fs.StringVar(&s.featureGates, "feature-gates", "", "feature gates for the Kubernetes components, e.g. A=true,B=false")
	fs.Var(&s.args, "arg", "extra flag for one component, as component=--flag=value (repeatable)")
}

func (s *startFlags) options() (controlplane.Options, error) {
	opts := controlplane.Options{
		Nodes:                    s.nodes,
		Controllers:              strings.Split(s.controllers, ","),
		DisableControllerManager: s.noKCM,
		DisableScheduler:         s.noScheduler,
		Log:                      os.Stderr,
	}
	if s.nodes <= 0 {
		return opts, fmt.Errorf("controlplane: -nodes must be positive")
	}
	if s.featureGates != "" {
		opts.FeatureGates = map[string]bool{}
		for _, kv := range strings.Split(s.featureGates, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || (v != "true" && v != "false") {
				return opts, fmt.Errorf("controlplane: -feature-gates: want Name=true|false, got %q", kv)
			}
			opts.FeatureGates[k] = v == "true"
		}
	}
	for _, a := range s.args {
		name, flagText, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(flagText, "-") {
			return opts, fmt.Errorf("controlplane: -arg: want component=--flag, got %q", a)
		}
		if opts.ExtraArgs == nil {
			opts.ExtraArgs = map[string][]string{}
		}
		opts.ExtraArgs[name] = append(opts.ExtraArgs[name], flagText)
	}
	return opts, nil
}

func runUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	var sf startFlags
	sf.register(fs, controlplane.DefaultNodes)
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts, err := sf.options()
	if err != nil {
		return err
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Stop()
	fmt.Printf("%s\n", cp.KubeconfigPath())
	fmt.Fprintf(os.Stderr, `controlplane: up; logs in %s
  export KUBECONFIG=%s
  kubectl get nodes
  cd examples && go run ./replicaset -kubeconfig %s -replicas 100 -final 10
controlplane: SIGINT or SIGTERM stops it and removes its data
`, cp.Dir(), cp.KubeconfigPath(), cp.KubeconfigPath())
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "controlplane: stopping")
	return cp.Stop()
}

// counts formats a request count with its status codes, "1005 (201×1000 409×5)".
func counts(c controlplane.RequestCounts, verb, resource, subresource string) string {
	byCode := map[string]float64{}
	var total float64
	for r, v := range c {
		if r.Verb == verb && r.Resource == resource && r.Subresource == subresource {
			byCode[r.Code] += v
			total += v
		}
	}
	codes := make([]string, 0, len(byCode))
	for code := range byCode {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = fmt.Sprintf("%s×%.0f", code, byCode[code])
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%.0f (%s)", total, strings.Join(parts, " "))
}

// writeCounts prints the write counts the demo cares about.
func writeCounts(w io.Writer, indent string, c controlplane.RequestCounts) {
	fmt.Fprintf(w, "%spod creates           %s\n", indent, counts(c, "POST", "pods", ""))
	fmt.Fprintf(w, "%spod deletes           %s\n", indent, counts(c, "DELETE", "pods", ""))
	fmt.Fprintf(w, "%spod patches           %s\n", indent, counts(c, "PATCH", "pods", ""))
	fmt.Fprintf(w, "%sreplicaset status PUT %s\n", indent, counts(c, "PUT", "replicasets", "status"))
}

// writesByUser prints, per client, the writes the demo cares about.
func writesByUser(w io.Writer, indent string, c controlplane.WriteCounts) {
	users := map[string]bool{}
	for k := range c {
		users[k.User] = true
	}
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	for _, u := range names {
		var parts []string
		for _, k := range []struct{ label, verb, resource, sub string }{
			{"pod creates", "create", "pods", ""},
			{"pod deletes", "delete", "pods", ""},
			{"pod patches", "patch", "pods", ""},
			{"pod status patches", "patch", "pods", "status"},
			{"bindings", "create", "pods", "binding"},
			{"replicaset status updates", "update", "replicasets", "status"},
		} {
			if s := byCode(c, u, k.verb, k.resource, k.sub); s != "" {
				parts = append(parts, k.label+" "+s)
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s%-24s %s\n", indent, u, strings.Join(parts, ", "))
		}
	}
}

// byCode formats the writes of one user and kind with their status codes,
// "1005 (201×1000 409×5)", or "" when there are none.
func byCode(c controlplane.WriteCounts, user, verb, resource, sub string) string {
	codes := map[int]int{}
	total := 0
	for k, v := range c {
		if k.User == user && k.Verb == verb && k.Resource == resource && k.Subresource == sub {
			codes[k.Code] += v
			total += v
		}
	}
	if total == 0 {
		return ""
	}
	keys := make([]int, 0, len(codes))
	for code := range codes {
		keys = append(keys, code)
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, code := range keys {
		parts[i] = fmt.Sprintf("%d×%d", code, codes[code])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, " "))
}
