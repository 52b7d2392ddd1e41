package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// profiling is compare's -profile: a CPU profile of each contender's
// controller process during the first scale-up and a heap profile once it
// converged, fetched from the process's own /debug/pprof/ endpoints
// (kube-controller-manager's --profiling on its secure port; the
// examples' pprof flag), so that the profiles say where the scale-up's
// CPU and the peak RSS go.
type profiling struct {
	dir     string // "": no profiles
	seconds int    // length of each profile
	phase   string // whose CPU is profiled: "scale-up" or "replace"
}

// cpuPhase returns the index in phases of the phase whose CPU -profile-phase
// asks for: scaleUp, or the first phase that deletes pods behind the
// controller's back with "replace"; -1 when there is none.
func (p profiling) cpuPhase(phases []phase, scaleUp int) int {
	if p.phase != "replace" {
		return scaleUp
	}
	for i, ph := range phases {
		if ph.disrupt > 0 {
			return i
		}
	}
	return -1
}

// pprofArgs returns the flags that make k's program serve its profiles on
// port, and whether it can.
func pprofArgs(c compareConfig, k contender, port int) ([]string, bool) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	switch k.program {
	case upstreamRS:
		// The launcher's --secure-port=0 is overridden: the last value wins.
		return []string{"--secure-port=" + strconv.Itoa(port), "--profiling=true"}, true
	case clientGoRS:
		return []string{"-pprof-address=" + addr}, true
	default:
		if c.podSetFlags["pprof-bind-address"] {
			return []string{"-pprof-bind-address=" + addr}, true
		}
		return nil, false
	}
}

// freeLoopbackPort returns a port that was free on 127.0.0.1 a moment
// ago. Another process may take it before the contender binds it; the
// contender then fails to start and the run says so: -profile is for
// runs made by hand.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// fetchCPUProfile takes a CPU profile of k's process listening on port
// and writes it to path.
func fetchCPUProfile(ctx context.Context, cp *controlplane.ControlPlane, k contender, port, seconds int, path string) error {
	return fetchProfile(ctx, cp, k, port, fmt.Sprintf("profile?seconds=%d", seconds), time.Duration(seconds)*time.Second, path)
}

// fetchHeapProfile takes a heap profile of k's process listening on port,
// after a garbage collection (what is live, not what is garbage), and
// writes it to path.
func fetchHeapProfile(ctx context.Context, cp *controlplane.ControlPlane, k contender, port int, path string) error {
	return fetchProfile(ctx, cp, k, port, "heap?gc=1", 0, path)
}

// fetchProfile reads /debug/pprof/<query> of k's process listening on
// port, which takes about d to answer, into path.
func fetchProfile(ctx context.Context, cp *controlplane.ControlPlane, k contender, port int, query string, d time.Duration, path string) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", port, query)
	client := &http.Client{Timeout: d + time.Minute}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if k.program == upstreamRS {
		// kube-controller-manager serves its self-signed certificate on
		// loopback and authorizes the path with a SubjectAccessReview:
		// the admin's token passes it.
		req.URL.Scheme = "https"
		req.Header.Set("Authorization", "Bearer "+cp.RESTConfig().BearerToken)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback, a test process's own certificate
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// profilePath is where the profile (kind "cpu" or "heap") of one run goes.
func profilePath(dir, kind, label string) string {
	slug := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, label)
	for strings.Contains(slug, "--") {
		slug = strings.ReplaceAll(slug, "--", "-")
	}
	return filepath.Join(dir, strings.Trim(slug, "-")+"."+kind+".pprof")
}
