package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// FaultProxy starts a [faultproxy.Proxy] in front of kube-apiserver and
// writes a kubeconfig for user ([AdminUser] or a component name) whose
// server is the proxy: give that kubeconfig to the one client whose traffic
// the faults are for; every other client keeps talking to kube-apiserver
// directly. The proxy serves kube-apiserver's own certificate (valid for
// 127.0.0.1, signed by the instance's CA) and passes the client's token
// through, so the client sees no difference until a fault is set. It keeps
// working across a restart of kube-apiserver (same port). [ControlPlane.Stop]
// closes it; the caller may close it earlier. The kubeconfig is removed by
// Stop.
func (cp *ControlPlane) FaultProxy(user string) (proxy *faultproxy.Proxy, kubeconfig string, err error) {
	if _, ok := cp.tokens[user]; !ok {
		return nil, "", fmt.Errorf("controlplane: FaultProxy: unknown user %q", user)
	}
	cert, err := tls.LoadX509KeyPair(cp.pki.servingCert, cp.pki.servingKey)
	if err != nil {
		return nil, "", fmt.Errorf("controlplane: FaultProxy: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cp.pki.caCert) {
		return nil, "", errors.New("controlplane: FaultProxy: the CA certificate does not parse")
	}
	upstream, err := url.Parse(cp.config.Host)
	if err != nil {
		return nil, "", fmt.Errorf("controlplane: FaultProxy: %w", err)
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return nil, "", errors.New("controlplane: stopped")
	}
	p, err := faultproxy.Start(faultproxy.Options{
		Upstream:    upstream,
		UpstreamTLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		Certificate: cert,
		ErrorLog:    cp.logw,
	})
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(cp.dir, fmt.Sprintf("%s-via-proxy-%d.kubeconfig", user, len(cp.proxies)))
	if err := cp.writeKubeconfigFor(path, user, p.URL()); err != nil {
		_ = p.Close()
		return nil, "", err
	}
	cp.proxies = append(cp.proxies, p)
	fmt.Fprintf(cp.logw, "controlplane: fault proxy for %s at %s (kubeconfig %s)\n", user, p.URL(), path)
	return p, path, nil
}
