package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pki is the generated key material of one control plane, as files in its
// data directory.
type pki struct {
	caCert      []byte // PEM, also embedded in every kubeconfig
	caCertFile  string
	servingCert string // kube-apiserver serving certificate and key files
	servingKey  string
	saKey       string // service-account signing key (private) and verification key (public)
	saPub       string
}

// newPKI writes a CA, a serving certificate for kube-apiserver (loopback and
// the in-cluster names) and a service-account key pair into dir. ECDSA P-256
// keeps generation fast.
func newPKI(dir string, now time.Time) (pki, error) {
	p := pki{
		caCertFile:  filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "sa.key"),
		saPub:       filepath.Join(dir, "sa.pub"),
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "reconcilekit-controlplane-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return p, err
	}
	p.caCert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceIP)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return p, err
	}
	saKeyDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return p, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return p, err
	}
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{
		{p.caCertFile, "CERTIFICATE", caDER},
		{p.servingCert, "CERTIFICATE", srvDER},
		{p.servingKey, "EC PRIVATE KEY", srvKeyDER},
		{p.saKey, "EC PRIVATE KEY", saKeyDER},
		{p.saPub, "PUBLIC KEY", saPubDER},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return p, err
		}
	}
	return p, nil
}

// randomToken returns 32 hex characters from crypto/rand.
func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeTokenFile writes kube-apiserver's --token-auth-file: one line
// "token,user,uid,\"group,…\"" per user; a user without an entry in groups
// is in system:masters, one with an empty entry in no group.
func writeTokenFile(path string, tokens map[string]string, groups map[string][]string) error {
	var b strings.Builder
	for user, tok := range tokens {
		g, ok := groups[user]
		if !ok {
			g = []string{"system:masters"}
		}
		fmt.Fprintf(&b, "%s,%s,%s", tok, user, user)
		if len(g) > 0 {
			fmt.Fprintf(&b, ",\"%s\"", strings.Join(g, ","))
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
