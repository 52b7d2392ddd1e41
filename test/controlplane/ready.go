package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// waitReady polls until the component's process listens on each of its
// ports and its health endpoint answers 200, or the process exits,
// ReadyTimeout passes or ctx is done. When the process's log says that one of
// its ports was taken by another process, it stops the process and returns a
// *portTakenError (wrapped, with the log's tail).
func (cp *ControlPlane) waitReady(ctx context.Context, name string) error {
	p := cp.proc(name)
	pid := p.cmd.Process.Pid
	ports := cp.portsOf(name)
	url, client := cp.healthURL(name)
	t0 := time.Now()
	err := cp.poll(ctx, name, func() (bool, string, error) {
		if port, taken := bindFailure(p.logSinceStart(), ports); taken {
			return false, "", &portTakenError{component: name, port: port}
		}
		for _, port := range ports {
			held, err := listens(pid, port)
			if err != nil {
				return false, err.Error(), nil
			}
			if !held {
				return false, fmt.Sprintf("pid %d does not listen on 127.0.0.1:%d yet", pid, port), nil
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err.Error(), nil
		}
		if name == KubeAPIServer {
			req.Header.Set("Authorization", "Bearer "+cp.tokens[AdminUser])
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s: %d %s", url, resp.StatusCode, tail(body, 5)), nil
	})
	if err != nil {
		// The process may have exited over a taken port between two checks.
		if port, taken := bindFailure(p.logSinceStart(), ports); taken {
			cp.mu.Lock()
			p.kill()
			cp.mu.Unlock()
			err = &portTakenError{component: name, port: port}
		}
		return p.errorWithLog(err)
	}
	fmt.Fprintf(cp.logw, "controlplane: %s ready after %.1fs\n", name, time.Since(t0).Seconds())
	return nil
}

// poll calls check until it reports done or an error; between calls it
// sleeps 50 ms doubling up to 1 s. It fails when check returns an error, when
// the component's process exits, after ReadyTimeout, or when ctx is done; the
// error names the last check result.
func (cp *ControlPlane) poll(ctx context.Context, name string, check func() (done bool, msg string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, cp.opts.ReadyTimeout)
	defer cancel()
	p := cp.proc(name)
	delay := 50 * time.Millisecond
	last := "not checked yet"
	for {
		if p != nil {
			if err := p.exited(); err != nil {
				return fmt.Errorf("%w before it was ready (last check: %s)", err, last)
			}
		}
		ok, msg, err := check()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		last = msg
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("controlplane: %s not ready: %w (last check: %s)", name, ctx.Err(), last)
		case <-t.C:
		}
		delay = min(2*delay, time.Second)
	}
}

// healthURL is the endpoint that says a component is serving, and a client
// for it. kube-controller-manager's and kube-scheduler's serving certificates
// are self-signed, so their health checks skip verification (loopback only).
func (cp *ControlPlane) healthURL(name string) (string, *http.Client) {
	port := strconv.Itoa(cp.port(name))
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, self-signed
	}}
	switch name {
	case Etcd:
		return "http://127.0.0.1:" + strconv.Itoa(cp.port("etcd-client")) + "/health", &http.Client{Timeout: 5 * time.Second}
	case KubeAPIServer:
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(cp.pki.caCert)
		return "https://127.0.0.1:" + port + "/readyz", &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
		}}
	case Kwok:
		return "http://127.0.0.1:" + port + "/healthz", &http.Client{Timeout: 5 * time.Second}
	default:
		return "https://127.0.0.1:" + port + "/healthz", insecure
	}
}

// HealthChecks returns the named checks of kube-controller-manager's or
// kube-scheduler's /healthz?verbose (for kube-controller-manager, one per
// running controller, e.g. "garbage-collector-controller"), each with whether
// it passed. The request carries the admin token. kube-controller-manager
// registers its controllers' checks all at once, after /healthz first
// answers: wait until a controller you expect is listed before concluding
// that another one is absent.
func (cp *ControlPlane) HealthChecks(ctx context.Context, name string) (map[string]bool, error) {
	if name != KubeControllerManager && name != KubeScheduler {
		return nil, fmt.Errorf("controlplane: HealthChecks: %s is not kube-controller-manager or kube-scheduler", name)
	}
	base, client := cp.healthURL(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?verbose", nil)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+cp.tokens[AdminUser])
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s healthz: %w", name, err)
	}
	checks := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		ok := strings.HasPrefix(line, "[+]")
		if !ok && !strings.HasPrefix(line, "[-]") {
			continue
		}
		check, _, _ := strings.Cut(line[3:], " ")
		checks[check] = ok
	}
	if len(checks) == 0 && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("controlplane: %s healthz: %d %s", name, resp.StatusCode, tail(body, 5))
	}
	return checks, nil
}

// NodeName returns the name of the i-th kwok node.
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// createNodes creates the kwok nodes and waits until kwok has made each Ready.
func (cp *ControlPlane) createNodes(ctx context.Context, client kubernetes.Interface) error {
	t0 := time.Now()
	for i := range cp.opts.Nodes {
		name := NodeName(i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{KwokNodeAnnotation: "fake"},
				Labels: map[string]string{
					"type":                   "kwok",
					"kubernetes.io/hostname": name,
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
				},
			},
			Status: corev1.NodeStatus{
				Allocatable: nodeResources(),
				Capacity:    nodeResources(),
			},
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("controlplane: creating node %s: %w", name, err)
		}
	}
	err := cp.poll(ctx, Kwok, func() (bool, string, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		ready := 0
		for i := range nodes.Items {
			for _, c := range nodes.Items[i].Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == cp.opts.Nodes, fmt.Sprintf("%d of %d nodes Ready", ready, cp.opts.Nodes), nil
	})
	if err != nil {
		return cp.proc(Kwok).errorWithLog(err)
	}
	fmt.Fprintf(cp.logw, "controlplane: %d kwok node(s) Ready after %.1fs\n", cp.opts.Nodes, time.Since(t0).Seconds())
	return nil
}

// nodeResources is what each kwok node offers: enough for 1000 small pods
// per node.
func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
}

// controllerEnabled applies kube-controller-manager's --controllers rules:
// "name" enables, "-name" disables, "*" enables the controllers that are on
// by default (serviceaccount-controller is one).
func controllerEnabled(controllers []string, name string) bool {
	star := false
	for _, c := range controllers {
		switch c {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star
}

// ensureDefaultServiceAccount waits for kube-controller-manager's
// service-account controller to create default/default (the ServiceAccount
// admission plugin rejects pods until it exists) or, when that controller
// does not run, creates it.
func (cp *ControlPlane) ensureDefaultServiceAccount(ctx context.Context, client kubernetes.Interface) error {
	sa := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault)
	if cp.opts.DisableControllerManager || !controllerEnabled(cp.opts.Controllers, "serviceaccount-controller") {
		_, err := sa.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("controlplane: creating default/default ServiceAccount: %w", err)
		}
		return nil
	}
	err := cp.poll(ctx, KubeControllerManager, func() (bool, string, error) {
		_, err := sa.Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		return cp.proc(KubeControllerManager).errorWithLog(err)
	}
	return nil
}
