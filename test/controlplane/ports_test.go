package controlplane_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// impostor starts a server of the test's own on 127.0.0.1 and returns its
// port, for the launcher to be handed as if it were free. It answers 200 to
// every request, as a component's health endpoint would, over TLS when tls
// is set (the health checks of kube-apiserver, kube-controller-manager and
// kube-scheduler are HTTPS).
func impostor(t *testing.T, tls bool) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// takenPorts is a port picker that hands out a taken port for chosen picks of
// a use and a free one otherwise.
type takenPorts struct {
	mu     sync.Mutex
	taken  map[string]map[int]int // use → pick number (1-based) → taken port
	picks  map[string]int
	handed []int // taken ports handed out
}

func (tp *takenPorts) pick(use string) (int, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.picks[use]++
	if port, ok := tp.taken[use][tp.picks[use]]; ok {
		tp.handed = append(tp.handed, port)
		return port, nil
	}
	return controlplane.FreePort(use)
}

func (tp *takenPorts) handedOut() []int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]int(nil), tp.handed...)
}

// Every port the launcher chooses can be taken by another process before the
// component binds it. Here each component is first handed a port that a
// server of the test holds and answers health checks on: the launcher does
// not take that server for the component, starts the component again on
// fresh ports and the control plane comes up. etcd is handed a taken peer
// port on its first start and a taken client port on its second.
func TestStartRetriesTakenPorts(t *testing.T) {
	tp := &takenPorts{
		taken: map[string]map[int]int{
			"etcd-peer":                        {1: impostor(t, false)},
			"etcd-client":                      {2: impostor(t, false)},
			controlplane.KubeAPIServer:         {1: impostor(t, true)},
			controlplane.KubeControllerManager: {1: impostor(t, true)},
			controlplane.KubeScheduler:         {1: impostor(t, true)},
			controlplane.Kwok:                  {1: impostor(t, false)},
		},
		picks: map[string]int{},
	}
	lw := &logWriter{t: t}
	opts := controlplane.WithPortPicker(controlplane.Options{Nodes: 1, Log: lw}, tp.pick)
	starting.Add(1)
	cp, err := controlplane.Start(testContext(t), opts)
	if err == nil {
		live.Lock()
		live.cps[cp] = true
		live.Unlock()
		stopAtCleanup(t, cp)
	}
	starting.Done()
	skipIfUnavailable(t, err)
	if err != nil {
		assertLeftNothing(t, startedPIDs(lw.String()), nil, removedDir(lw.String()))
	}
	require.NoError(t, err)

	handed := tp.handedOut()
	require.Len(t, handed, 6, "a taken port for each use")
	for _, port := range handed {
		assert.Contains(t, lw.String(), fmt.Sprintf("port %d was taken by another process", port))
		for use, p := range cp.Ports() {
			assert.NotEqual(t, port, p, "%s kept a taken port", use)
		}
	}
	assert.Len(t, cp.PIDs(), 5+len(handed), "each component, started once more per taken port")
	// The real kube-controller-manager answers, not the impostor.
	checks := controllerChecks(t, testContext(t), cp)
	assert.Contains(t, checks, "garbage-collector-controller")
}

// A component that finds its port taken on every start gives up after
// MaxPortAttempts starts, and Start fails with what happened, leaving
// nothing behind.
func TestStartGivesUpOnTakenPorts(t *testing.T) {
	taken := impostor(t, false)
	always := map[int]int{}
	for i := 1; i <= controlplane.MaxPortAttempts; i++ {
		always[i] = taken
	}
	tp := &takenPorts{taken: map[string]map[int]int{"etcd-peer": always}, picks: map[string]int{}}
	lw := &logWriter{t: t}
	opts := controlplane.WithPortPicker(controlplane.Options{Log: lw}, tp.pick)
	starting.Add(1)
	cp, err := controlplane.Start(testContext(t), opts)
	starting.Done()
	skipIfUnavailable(t, err)
	require.Error(t, err)
	assert.Nil(t, cp)
	assert.Contains(t, err.Error(), fmt.Sprintf("etcd could not listen on 127.0.0.1:%d: another process holds the port", taken))
	assert.Contains(t, err.Error(), "bind: address already in use", "the log's tail")
	pids := startedPIDs(lw.String())
	assert.Len(t, pids, controlplane.MaxPortAttempts, "etcd's starts")
	assertLeftNothing(t, pids, nil, removedDir(lw.String()))
}

// Several control planes started at once, as go test runs this package and
// e2e side by side: each starts (none fails on a port another one took), and
// no two share a port. Every Start is bounded by a context; each control
// plane is stopped by pid in t.Cleanup, also when another one failed.
func TestStartSeveralAtOnce(t *testing.T) {
	const n = 3
	ctx, cancel := context.WithTimeout(testContext(t), 6*time.Minute)
	defer cancel()
	cps := make([]*controlplane.ControlPlane, n)
	errs := make([]error, n)
	logs := make([]*logWriter, n)
	var wg sync.WaitGroup
	for i := range n {
		logs[i] = &logWriter{t: t}
		starting.Add(1)
		wg.Go(func() {
			defer starting.Done()
			cp, err := controlplane.Start(ctx, controlplane.Options{Nodes: 1, Log: logs[i]})
			if err == nil {
				live.Lock()
				live.cps[cp] = true
				live.Unlock()
			}
			cps[i] = cp
			errs[i] = err
		})
	}
	wg.Wait()
	for _, cp := range cps {
		if cp != nil {
			stopAtCleanup(t, cp)
		}
	}
	for i, err := range errs {
		skipIfUnavailable(t, err)
		if err != nil {
			assertLeftNothing(t, startedPIDs(logs[i].String()), nil, removedDir(logs[i].String()))
		}
	}
	for i, err := range errs {
		require.NoError(t, err, "control plane %d", i)
	}

	owner := map[int]string{}
	for i, cp := range cps {
		retries := strings.Count(logs[i].String(), "was taken by another process")
		t.Logf("control plane %d: ports %v, %d start(s) again on fresh ports", i, cp.Ports(), retries)
		for use, port := range cp.Ports() {
			me := fmt.Sprintf("control plane %d's %s", i, use)
			assert.NotContains(t, owner, port, "port %d of %s is also %s", port, me, owner[port])
			owner[port] = me
		}
		client, err := kubernetes.NewForConfig(cp.RESTConfig())
		require.NoError(t, err)
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.Len(t, nodes.Items, 1, "control plane %d", i)
	}
	assert.Len(t, owner, 6*n, "six ports per control plane")
}
