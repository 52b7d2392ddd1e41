package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// Component names, as used in [Options.ExtraArgs], [ControlPlane.StopComponent]
// and in the names of the binaries.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Kwok                  = "kwok"
)

// Defaults of [Options].
const (
	DefaultNodes        = 3
	DefaultReadyTimeout = 2 * time.Minute
	DefaultStopTimeout  = 10 * time.Second
	// KwokNodeAnnotation marks the nodes kwok manages (its
	// --manage-nodes-with-annotation-selector is KwokNodeAnnotation=fake).
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// DefaultControllers is kube-controller-manager's --controllers by default:
// every controller except upstream's ReplicaSet controller, so that the
// controller under test owns ReplicaSets alone.
var DefaultControllers = []string{"*", "-replicaset-controller"}

const (
	serviceCIDR = "10.0.0.0/24"
	serviceIP   = "10.0.0.1"
	podCIDR     = "10.128.0.0/16" // kwok's pod IPs: room for far more than 1000 pods
	tmpPrefix   = "reconcilekit-controlplane-"
)

// Options configure [Start]. The zero value starts etcd, kube-apiserver,
// kube-controller-manager (without the ReplicaSet controller), kube-scheduler
// and kwok with DefaultNodes nodes.
type Options struct {
	// Nodes is the number of kwok nodes; 0 means DefaultNodes, negative is an error.
	Nodes int
	// DisableControllerManager leaves kube-controller-manager out (no garbage
	// collector, namespace finalization or service-account controller). Start
	// then creates the "default" ServiceAccount in "default" itself so pods can
	// be created there (also when Controllers leaves serviceaccount-controller out).
	DisableControllerManager bool
	// DisableScheduler leaves kube-scheduler out: pods stay unscheduled.
	DisableScheduler bool
	// Controllers is kube-controller-manager's --controllers; nil means
	// DefaultControllers. Use []string{"*"} to run upstream's ReplicaSet controller.
	Controllers []string
	// FeatureGates are passed as --feature-gates to kube-apiserver,
	// kube-controller-manager and kube-scheduler.
	FeatureGates map[string]bool
	// AuditWrites makes kube-apiserver write an audit log of every write to
	// pods, ReplicaSets and PodSets, which [ControlPlane.Writes] counts by
	// user, and of every request of ControllerUser ([ControlPlane.Audit]).
	AuditWrites bool
	// ExtraArgs are appended, per component name, after the launcher's own
	// flags (for single-valued flags the last one wins).
	ExtraArgs map[string][]string
	// Binaries are the programs to run; nil means Build(ctx, Build).
	Binaries *Binaries
	// Build configures the build when Binaries is nil.
	Build BuildOptions
	// TempDir is where the instance's data directory is created; "" means os.TempDir().
	TempDir string
	// ReadyTimeout bounds the wait for each component to become ready; 0 means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL, per
	// process; 0 means DefaultStopTimeout.
	StopTimeout time.Duration
	// Log receives one line per step of Start and Stop; nil: discarded.
	Log io.Writer
	// Users are further users kube-apiserver authenticates by token, each
	// with a kubeconfig of its own ([ControlPlane.Kubeconfig],
	// [ControlPlane.FaultProxy]): one per controller replica, or one bound
	// to exactly a role under test. Names must be distinct, not empty, and
	// not one of the built-in users (AdminUser, ControllerUser, the
	// component names). Every request of a user listed here is in the
	// audit log ([Options.AuditWrites]), as ControllerUser's.
	Users []User

	// pickPort chooses a port for a use (a key of [ControlPlane.Ports]);
	// nil means freePort. Tests set it to hand out taken ports.
	pickPort func(use string) (int, error)
}

// User is a user of the control plane (see [Options.Users]).
type User struct {
	// Name is the user name kube-apiserver authenticates, and the user of
	// the audit log's entries.
	Name string
	// Groups are the user's groups. Nil means system:masters, as every
	// built-in user: the user may do anything. A non-nil empty slice means
	// no group beyond system:authenticated, so that RBAC grants the user
	// exactly what its bindings say.
	Groups []string
}

// builtinUsers are the users every control plane has.
func builtinUsers() []string {
	return []string{AdminUser, ControllerUser, KubeControllerManager, KubeScheduler, Kwok}
}

// validateUsers checks Options.Users.
func validateUsers(users []User) error {
	seen := map[string]bool{}
	for _, u := range builtinUsers() {
		seen[u] = true
	}
	for i, u := range users {
		if u.Name == "" {
			return fmt.Errorf("controlplane: Users[%d] has no name", i)
		}
		if strings.ContainsAny(u.Name, ",\"\n") {
			return fmt.Errorf("controlplane: Users[%d]: name %q has a comma, quote or newline", i, u.Name)
		}
		if seen[u.Name] {
			return fmt.Errorf("controlplane: Users[%d]: user %q is already defined", i, u.Name)
		}
		seen[u.Name] = true
		for _, g := range u.Groups {
			if g == "" || strings.ContainsAny(g, ",\"\n") {
				return fmt.Errorf("controlplane: Users[%d]: group %q is empty or has a comma, quote or newline", i, g)
			}
		}
	}
	return nil
}

// ControlPlane is a running set of components started by [Start]. Its methods
// are safe for concurrent use. The caller must call [ControlPlane.Stop].
type ControlPlane struct {
	dir        string
	kubeconfig string
	config     *rest.Config
	pki        pki
	tokens     map[string]string
	groups     map[string][]string // by user; absent: system:masters
	opts       Options
	bins       Binaries
	logw       io.Writer

	mu      sync.Mutex
	ports   map[string]int // by use; chosen by choosePorts while Start runs
	procs   []*process     // in start order
	started []int          // every pid ever started
	proxies []*faultproxy.Proxy
	stopped bool
}

// Start builds the binaries if needed and starts a control plane on
// 127.0.0.1 with free ports, fresh certificates and tokens and a data
// directory of its own. A component that finds one of its ports taken by
// another process (chosen free, taken before the component bound it) is
// started again on fresh ports, up to 5 times. It returns when kube-apiserver is ready, every other
// component reports healthy, every kwok node is Ready and pods can be
// created in the "default" namespace. ctx bounds the start only; the
// processes run until [ControlPlane.Stop]. On failure Start stops whatever it
// started, removes its data and returns an error with the tail of the
// failing component's log.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("controlplane: Nodes = %d, want >= 0", opts.Nodes)
	}
	if err := validateUsers(opts.Users); err != nil {
		return nil, err
	}
	if opts.Nodes == 0 {
		opts.Nodes = DefaultNodes
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.Controllers == nil {
		opts.Controllers = DefaultControllers
	}
	if opts.pickPort == nil {
		opts.pickPort = freePort
	}
	for name := range opts.ExtraArgs {
		if !knownComponent(name) {
			return nil, fmt.Errorf("controlplane: ExtraArgs: unknown component %q", name)
		}
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	var bins Binaries
	if opts.Binaries != nil {
		bins = *opts.Binaries
	} else {
		b, err := Build(ctx, opts.Build)
		if err != nil {
			return nil, err
		}
		bins = b
	}
	sweepStale(opts.TempDir)
	dir, err := os.MkdirTemp(opts.TempDir, tmpPrefix)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	cp := &ControlPlane{dir: dir, opts: opts, bins: bins, logw: logw, ports: map[string]int{}}
	if err := cp.start(ctx); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func knownComponent(name string) bool {
	switch name {
	case Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Kwok:
		return true
	}
	return false
}

// start prepares the files and starts the components in dependency order.
func (cp *ControlPlane) start(ctx context.Context) error {
	t0 := time.Now()
	if err := os.WriteFile(filepath.Join(cp.dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	p, err := newPKI(cp.dir, time.Now())
	if err != nil {
		return fmt.Errorf("controlplane: certificates: %w", err)
	}
	cp.pki = p
	cp.tokens = map[string]string{}
	cp.groups = map[string][]string{}
	users := builtinUsers()
	for _, u := range cp.opts.Users {
		users = append(users, u.Name)
		if u.Groups != nil {
			cp.groups[u.Name] = u.Groups
		}
	}
	for _, user := range users {
		tok, err := randomToken()
		if err != nil {
			return fmt.Errorf("controlplane: token: %w", err)
		}
		cp.tokens[user] = tok
	}
	if err := writeTokenFile(filepath.Join(cp.dir, "tokens.csv"), cp.tokens, cp.groups); err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	if cp.opts.AuditWrites {
		policy, _ := cp.auditPaths()
		if err := os.WriteFile(policy, []byte(auditPolicyFor(cp.auditedUsers())), 0o644); err != nil {
			return fmt.Errorf("controlplane: %w", err)
		}
	}

	// etcd, then kube-apiserver; the others only need the API server and start together.
	if err := cp.launch(ctx, Etcd); err != nil {
		return err
	}
	// The admin rest.Config and the kubeconfigs need kube-apiserver's port,
	// known once it listens on it.
	cp.config = &rest.Config{
		BearerToken:     cp.tokens[AdminUser],
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.pki.caCert},
	}
	if err := cp.launch(ctx, KubeAPIServer); err != nil {
		return err
	}
	cp.config.Host = fmt.Sprintf("https://127.0.0.1:%d", cp.port(KubeAPIServer))
	for user := range cp.tokens {
		path := cp.kubeconfigFor(user)
		if err := cp.writeKubeconfig(path, user); err != nil {
			return err
		}
	}
	cp.kubeconfig = cp.kubeconfigFor(AdminUser)
	others := []string{Kwok}
	if !cp.opts.DisableControllerManager {
		others = append(others, KubeControllerManager)
	}
	if !cp.opts.DisableScheduler {
		others = append(others, KubeScheduler)
	}
	for _, name := range others {
		if err := cp.spawnOnFreshPorts(name); err != nil {
			return err
		}
	}
	for _, name := range others {
		if err := cp.waitStarted(ctx, name); err != nil {
			return err
		}
	}
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	if err := cp.createNodes(ctx, client); err != nil {
		return err
	}
	if err := cp.ensureDefaultServiceAccount(ctx, client); err != nil {
		return err
	}
	fmt.Fprintf(cp.logw, "controlplane: ready in %.1fs: %s (kubeconfig %s)\n", time.Since(t0).Seconds(), cp.config.Host, cp.kubeconfig)
	return nil
}

func (cp *ControlPlane) kubeconfigFor(user string) string {
	return filepath.Join(cp.dir, user+".kubeconfig")
}

func (cp *ControlPlane) writeKubeconfig(path, user string) error {
	return cp.writeKubeconfigFor(path, user, cp.config.Host)
}

// writeKubeconfigFor writes a kubeconfig for user whose server is server.
func (cp *ControlPlane) writeKubeconfigFor(path, user, server string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["reconcilekit"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cp.pki.caCert}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: cp.tokens[user]}
	cfg.Contexts["reconcilekit"] = &clientcmdapi.Context{Cluster: "reconcilekit", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "reconcilekit"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("controlplane: kubeconfig: %w", err)
	}
	return nil
}

// args returns the command line of a component: the launcher's flags, the
// feature gates, then Options.ExtraArgs. It is called with cp.mu held.
func (cp *ControlPlane) args(name string) []string {
	dir := filepath.Join(cp.dir, name)
	port := func(n string) string { return strconv.Itoa(cp.ports[n]) }
	var a []string
	switch name {
	case Etcd:
		client := "http://127.0.0.1:" + port("etcd-client")
		peer := "http://127.0.0.1:" + port("etcd-peer")
		a = []string{
			"--name=default", "--data-dir=" + dir,
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=default=" + peer,
			"--unsafe-no-fsync=true", // a throw-away test store on a shared machine
			"--log-level=warn",
		}
	case KubeAPIServer:
		a = []string{
			"--etcd-servers=http://127.0.0.1:" + port("etcd-client"),
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port=" + port(KubeAPIServer),
			"--cert-dir=" + dir,
			"--tls-cert-file=" + cp.pki.servingCert, "--tls-private-key-file=" + cp.pki.servingKey,
			"--client-ca-file=" + cp.pki.caCertFile,
			"--token-auth-file=" + filepath.Join(cp.dir, "tokens.csv"),
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + cp.pki.saPub,
			"--service-account-signing-key-file=" + cp.pki.saKey,
			"--service-cluster-ip-range=" + serviceCIDR,
			// The "kubernetes" Service's endpoints would be 127.0.0.1, which
			// Endpoints validation rejects: do not reconcile them.
			"--endpoint-reconciler-type=none",
		}
		if cp.opts.AuditWrites {
			policy, log := cp.auditPaths()
			// The counts read the whole log from its start: never rotate it
			// (kube-apiserver's default rotates at 100 MB, which a 3000 × 10
			// fleet run passed in its last phase, and its counts went
			// negative).
			a = append(a, "--audit-policy-file="+policy, "--audit-log-path="+log, "--audit-log-maxsize=0")
		}
	case KubeControllerManager:
		kc := cp.kubeconfigFor(KubeControllerManager)
		a = []string{
			"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
			"--bind-address=127.0.0.1", "--secure-port=" + port(KubeControllerManager), "--cert-dir=" + dir,
			"--leader-elect=false",
			"--controllers=" + strings.Join(cp.opts.Controllers, ","),
			"--service-account-private-key-file=" + cp.pki.saKey,
			"--root-ca-file=" + cp.pki.caCertFile,
			"--service-cluster-ip-range=" + serviceCIDR,
		}
	case KubeScheduler:
		kc := cp.kubeconfigFor(KubeScheduler)
		a = []string{
			"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
			"--bind-address=127.0.0.1", "--secure-port=" + port(KubeScheduler), "--cert-dir=" + dir,
			"--leader-elect=false",
		}
	case Kwok:
		a = []string{
			"--kubeconfig=" + cp.kubeconfigFor(Kwok),
			"--config=" + cp.bins.KwokStages,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
			"--cidr=" + podCIDR,
			"--node-ip=127.0.0.1",
			"--server-address=127.0.0.1:" + port(Kwok),
		}
	}
	if name != Etcd && name != Kwok && len(cp.opts.FeatureGates) > 0 {
		gates := make([]string, 0, len(cp.opts.FeatureGates))
		for g, on := range cp.opts.FeatureGates {
			gates = append(gates, g+"="+strconv.FormatBool(on))
		}
		sort.Strings(gates)
		a = append(a, "--feature-gates="+strings.Join(gates, ","))
	}
	return append(a, cp.opts.ExtraArgs[name]...)
}

func (cp *ControlPlane) binary(name string) string {
	switch name {
	case Etcd:
		return cp.bins.Etcd
	case KubeAPIServer:
		return cp.bins.KubeAPIServer
	case KubeControllerManager:
		return cp.bins.KubeControllerManager
	case KubeScheduler:
		return cp.bins.KubeScheduler
	default:
		return cp.bins.Kwok
	}
}

// launch starts a component for the first time, on fresh ports, and waits
// until it is ready.
func (cp *ControlPlane) launch(ctx context.Context, name string) error {
	if err := cp.spawnOnFreshPorts(name); err != nil {
		return err
	}
	return cp.waitStarted(ctx, name)
}

// spawnOnFreshPorts chooses the ports of a component that is not running and
// starts it without waiting.
func (cp *ControlPlane) spawnOnFreshPorts(name string) error {
	if err := cp.choosePorts(name); err != nil {
		return err
	}
	return cp.spawn(name)
}

// waitStarted waits until a component started by spawnOnFreshPorts is ready.
// When the component could not listen on a port because another process took
// it after choosePorts, it is started again on fresh ports, up to
// maxPortAttempts starts in all.
func (cp *ControlPlane) waitStarted(ctx context.Context, name string) error {
	for attempt := 1; ; attempt++ {
		err := cp.waitReady(ctx, name)
		var taken *portTakenError
		if !errors.As(err, &taken) || attempt == maxPortAttempts {
			return err
		}
		fmt.Fprintf(cp.logw, "controlplane: %s: port %d was taken by another process; starting it again on fresh ports (attempt %d of %d)\n",
			name, taken.port, attempt+1, maxPortAttempts)
		if err := cp.spawnOnFreshPorts(name); err != nil {
			return err
		}
	}
}

// choosePorts chooses fresh ports for every use of a component that is not
// running (see portUses), each different from every other port of the
// instance, and forgets the component's process, so that the next spawn
// builds its command line with the new ports.
func (cp *ControlPlane) choosePorts(name string) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if p := cp.find(name); p != nil {
		if p.running() {
			return fmt.Errorf("controlplane: %s is already running", name)
		}
		cp.procs = slices.DeleteFunc(cp.procs, func(q *process) bool { return q == p })
	}
	for _, use := range portUses(name) {
		delete(cp.ports, use)
	}
	for _, use := range portUses(name) {
		port, err := cp.distinctPort(use)
		if err != nil {
			return err
		}
		cp.ports[use] = port
	}
	return nil
}

// distinctPort picks a port for use that no other use of the instance has:
// a port is released once picked, so the kernel may hand it out again.
func (cp *ControlPlane) distinctPort(use string) (int, error) {
	for range maxPortAttempts {
		port, err := cp.opts.pickPort(use)
		if err != nil {
			return 0, err
		}
		taken := false
		for _, other := range cp.ports {
			if other == port {
				taken = true
			}
		}
		if !taken {
			return port, nil
		}
	}
	return 0, fmt.Errorf("controlplane: no free port for %s that the instance does not use already", use)
}

// port is the port of a use (a key of [ControlPlane.Ports]).
func (cp *ControlPlane) port(use string) int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.ports[use]
}

// portsOf returns the ports a component listens on.
func (cp *ControlPlane) portsOf(name string) []int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var ports []int
	for _, use := range portUses(name) {
		ports = append(ports, cp.ports[use])
	}
	return ports
}

// spawn starts a component (again, after StopComponent) without waiting.
func (cp *ControlPlane) spawn(name string) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return errors.New("controlplane: stopped")
	}
	p := cp.find(name)
	if p == nil {
		if err := os.MkdirAll(filepath.Join(cp.dir, name), 0o700); err != nil {
			return fmt.Errorf("controlplane: %w", err)
		}
		p = &process{name: name, path: cp.binary(name), args: cp.args(name), logPath: filepath.Join(cp.dir, name+".log")}
		cp.procs = append(cp.procs, p)
	} else if p.running() {
		return fmt.Errorf("controlplane: %s is already running", name)
	}
	if err := p.start(); err != nil {
		return err
	}
	cp.started = append(cp.started, p.cmd.Process.Pid)
	fmt.Fprintf(cp.logw, "controlplane: started %s (pid %d)\n", name, p.cmd.Process.Pid)
	return nil
}

// StartProcess starts path with args as a process of the instance, for a
// controller under test: its output goes to LogPath(name), it gets the
// components' protection (its own process group, SIGKILL if the launcher
// dies), and [ControlPlane.Stop] stops it, before the components. It does
// not wait for anything; it returns the pid. name must not be a
// component's, nor one already started.
func (cp *ControlPlane) StartProcess(name, path string, args ...string) (pid int, err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return 0, errors.New("controlplane: stopped")
	}
	if knownComponent(name) || cp.find(name) != nil || name == "" || strings.ContainsAny(name, "/\\") {
		return 0, fmt.Errorf("controlplane: StartProcess: name %q is taken or invalid", name)
	}
	p := &process{name: name, path: path, args: args, logPath: filepath.Join(cp.dir, name+".log")}
	if err := p.start(); err != nil {
		return 0, err
	}
	cp.procs = append(cp.procs, p)
	pid = p.cmd.Process.Pid
	cp.started = append(cp.started, pid)
	fmt.Fprintf(cp.logw, "controlplane: started %s (pid %d)\n", name, pid)
	return pid, nil
}

// StartReplicaSetController starts a second kube-controller-manager, named
// name, that runs upstream's ReplicaSet controller alone
// (--controllers=replicaset-controller), serves no port (--secure-port=0, so
// it races no other process for one) and talks to the API server through
// kubeconfig (for example a [ControlPlane.FaultProxy]'s for
// [ControllerUser]), with extra flags appended (--kube-api-qps,
// --concurrent-replicaset-syncs, --feature-gates, …; --leader-elect=true
// and the --leader-elect-* flags run it as one replica of several behind the
// Lease kube-system/kube-controller-manager, the last flag winning over
// the --leader-elect=false it gets by default). Start the instance
// with Options.Controllers leaving replicaset-controller out (the default)
// so that it owns ReplicaSets alone. It is a process of the instance, as
// with [ControlPlane.StartProcess].
func (cp *ControlPlane) StartReplicaSetController(name, kubeconfig string, extra ...string) (pid int, err error) {
	dir := filepath.Join(cp.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("controlplane: %w", err)
	}
	auth := cp.kubeconfigFor(KubeControllerManager)
	args := append([]string{
		"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + auth, "--authorization-kubeconfig=" + auth,
		"--secure-port=0", "--cert-dir=" + dir,
		"--leader-elect=false",
		"--controllers=replicaset-controller",
	}, extra...)
	return cp.StartProcess(name, cp.binary(KubeControllerManager), args...)
}

func (cp *ControlPlane) find(name string) *process {
	for _, p := range cp.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

func (cp *ControlPlane) proc(name string) *process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.find(name)
}

// RESTConfig returns a new copy of the admin client configuration (a token
// in system:masters, the generated CA).
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return rest.CopyConfig(cp.config)
}

// Kubeconfig is the kubeconfig file of user ([AdminUser], [ControllerUser]
// or a component name), talking to kube-apiserver directly; it is removed by
// Stop.
func (cp *ControlPlane) Kubeconfig(user string) (string, error) {
	if _, ok := cp.tokens[user]; !ok {
		return "", fmt.Errorf("controlplane: Kubeconfig: unknown user %q", user)
	}
	return cp.kubeconfigFor(user), nil
}

// KubeconfigPath is the admin kubeconfig file; it is removed by Stop.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfig }

// Dir is the instance's data directory (logs, certificates, etcd data); it is removed by Stop.
func (cp *ControlPlane) Dir() string { return cp.dir }

// LogPath is the log file of a component in Dir.
func (cp *ControlPlane) LogPath(name string) string { return filepath.Join(cp.dir, name+".log") }

// Ports returns the loopback ports the instance's components listen on, by
// use: "etcd-client", "etcd-peer" and the name of every other component
// started.
func (cp *ControlPlane) Ports() map[string]int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return maps.Clone(cp.ports)
}

// PIDs returns the pid of every process the instance has started, including
// processes that have exited and earlier runs of restarted components.
func (cp *ControlPlane) PIDs() []int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]int(nil), cp.started...)
}

// PID returns the pid of the component or process started under name
// (KubeAPIServer, Etcd, a name given to [ControlPlane.StartProcess], …) in
// its current run, and whether it is running; make compare reads
// kube-apiserver's CPU time from /proc with it. Safe for concurrent use.
func (cp *ControlPlane) PID(name string) (int, bool) {
	p := cp.proc(name)
	if p == nil || p.cmd == nil || p.cmd.Process == nil || !p.running() {
		return 0, false
	}
	return p.cmd.Process.Pid, true
}

// StopComponent stops one component (SIGTERM, then SIGKILL after the stop
// timeout) and keeps its data, so that [ControlPlane.StartComponent] can
// restart it with the same flags and ports. kube-apiserver with connected
// clients keeps running after SIGTERM until its open watches end (up to a
// minute), so this takes the whole stop timeout; [ControlPlane.KillComponent]
// does not wait.
func (cp *ControlPlane) StopComponent(name string) error {
	return cp.halt(name, false)
}

// KillComponent kills one component with SIGKILL, as a crash would, and keeps
// its data, so that [ControlPlane.StartComponent] can restart it; for example
// kube-apiserver in the middle of a scale-up.
func (cp *ControlPlane) KillComponent(name string) error {
	return cp.halt(name, true)
}

func (cp *ControlPlane) halt(name string, kill bool) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	p := cp.find(name)
	if p == nil {
		return fmt.Errorf("controlplane: %s was not started", name)
	}
	if kill {
		p.kill()
		fmt.Fprintf(cp.logw, "controlplane: killed %s\n", name)
	} else {
		p.stop(cp.opts.StopTimeout)
		fmt.Fprintf(cp.logw, "controlplane: stopped %s\n", name)
	}
	return nil
}

// Signal sends sig to the running process name (a component, or a process
// of [ControlPlane.StartProcess] or [ControlPlane.StartReplicaSetController])
// by its pid, and does not wait: SIGSTOP and SIGCONT to pause and resume a
// controller replica, SIGTERM for a graceful stop, SIGKILL for a crash
// ([ControlPlane.KillComponent] also waits for the process to be reaped).
// [ControlPlane.Stop] resumes a stopped process before stopping it. It
// fails for a name never started and for a process that has exited.
func (cp *ControlPlane) Signal(name string, sig syscall.Signal) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	p := cp.find(name)
	if p == nil {
		return fmt.Errorf("controlplane: Signal: %s was not started", name)
	}
	if !p.running() {
		return fmt.Errorf("controlplane: Signal: %s has exited", name)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("controlplane: Signal: %s: %w", name, err)
	}
	fmt.Fprintf(cp.logw, "controlplane: sent %v to %s (pid %d)\n", sig, name, p.cmd.Process.Pid)
	return nil
}

// Running reports whether the process name (a component or a process of
// [ControlPlane.StartProcess]) was started and has not exited; a process
// stopped by SIGSTOP is running.
func (cp *ControlPlane) Running(name string) bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	p := cp.find(name)
	return p != nil && p.running()
}

// StartComponent starts a component stopped by StopComponent or KillComponent again and waits
// until it is ready. It keeps the component's ports, which its clients know:
// if another process has taken one of them meanwhile, it fails.
func (cp *ControlPlane) StartComponent(ctx context.Context, name string) error {
	if cp.proc(name) == nil {
		return fmt.Errorf("controlplane: %s was not started", name)
	}
	if err := cp.spawn(name); err != nil {
		return err
	}
	return cp.waitReady(ctx, name)
}

// Stop stops every process the instance started, in reverse start order
// (SIGTERM, then SIGKILL after the stop timeout), waits until each has been
// reaped and removes the data directory. It is idempotent; it returns an
// error only if the data could not be removed.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return nil
	}
	cp.stopped = true
	for _, p := range cp.proxies {
		_ = p.Close()
	}
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].stop(cp.opts.StopTimeout)
	}
	fmt.Fprintf(cp.logw, "controlplane: stopped %d process(es), removing %s\n", len(cp.procs), cp.dir)
	if err := os.RemoveAll(cp.dir); err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	return nil
}

// sweepStale removes data directories of earlier instances whose owning
// process no longer exists (a test binary killed by its timeout cannot run
// its cleanups; Pdeathsig has killed its children, this removes their data).
func sweepStale(parent string) {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, tmpPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || pidAlive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}
