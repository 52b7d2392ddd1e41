package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The demo scenario, scaled down, runs to convergence in the in-process
// cluster with faults on, in both expectation modes, and prints its summary.
func TestDemoScenario(t *testing.T) {
	for _, exact := range []string{"true", "false"} {
		t.Run("exact="+exact, func(t *testing.T) {
			args := []string{
				"-replicas=40", "-final=3", "-disrupt=2", "-min-ready-seconds=0", "-ready-delay=10ms",
				"-create-fault=0.05", "-lost-create-fault=0.02", "-delete-fault=0.05", "-status-fault=0.05",
				"-seed=5", "-exact=" + exact,
			}
			serving := exact == "true" // the endpoints are off by default
			if serving {
				args = append(args, "-metrics-bind-address=127.0.0.1:0", "-health-probe-bind-address=127.0.0.1:0")
			}
			cfg, err := parseFlags(args, io.Discard)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			var out bytes.Buffer
			require.NoError(t, run(ctx, cfg, &out), out.String())

			s := out.String()
			assert.Equal(t, 5, strings.Count(s, "✓ converged"), s)
			assert.Contains(t, s, "scale 0 → 40")
			assert.Contains(t, s, "adopted 1 orphan(s)")
			assert.Contains(t, s, "deleting ")
			assert.Contains(t, s, "\nsummary\n")
			assert.Contains(t, s, "satisfied at the end: true")
			assert.Equal(t, serving, strings.Contains(s, "serving metrics on http://127.0.0.1:"), s)
			assert.Equal(t, serving, strings.Contains(s, "serving health probes on http://127.0.0.1:"), s)
		})
	}
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 1000, cfg.replicas, "the documented default scenario: 0 → 1000 → 10")
	assert.Equal(t, 10, cfg.final)

	var help bytes.Buffer
	_, err = parseFlags([]string{"-h"}, &help)
	assert.True(t, errors.Is(err, flag.ErrHelp))
	for _, f := range []string{"-kubeconfig", "-replicas", "-create-fault", "-delete-fault", "-seed", "-ready-delay", "-exact", "-consistency-gate", "-metrics-bind-address", "-health-probe-bind-address"} {
		assert.Contains(t, help.String(), f)
	}
	assert.Contains(t, help.String(), "--controllers=*,-replicaset-controller")

	for _, bad := range [][]string{{"-replicas=-1"}, {"-create-fault=0.9"}, {"-replicas=3", "-disrupt=4"}} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

// Leader election: kube-controller-manager's flags and defaults; off in the
// in-process demo, on against a real cluster unless -leader-elect=false.
func TestLeaderElectionFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.False(t, cfg.election.Enabled, "the in-process demo runs without leader election")

	cfg, err = parseFlags([]string{"-kubeconfig=/dev/null"}, io.Discard)
	require.NoError(t, err)
	le := cfg.election
	assert.True(t, le.Enabled, "on by default against a real cluster")
	assert.Equal(t, 15*time.Second, le.LeaseDuration)
	assert.Equal(t, 10*time.Second, le.RenewDeadline)
	assert.Equal(t, 2*time.Second, le.RetryPeriod)
	assert.Equal(t, "kube-system", le.Namespace)
	assert.Equal(t, "reconcilekit-replicaset", le.Name)
	assert.Contains(t, le.Identity, "_", "hostname + \"_\" + a unique suffix")
	assert.True(t, cfg.scenario)
	assert.Equal(t, "default", cfg.namespace)

	cfg, err = parseFlags([]string{"-kubeconfig=/dev/null", "-leader-elect=false"}, io.Discard)
	require.NoError(t, err)
	assert.False(t, cfg.election.Enabled)

	cfg, err = parseFlags([]string{"-kubeconfig=/dev/null", "-scenario=false", "-leader-elect-identity=r1",
		"-leader-elect-lease-duration=4s", "-leader-elect-renew-deadline=3s", "-leader-elect-retry-period=500ms",
		"-leader-elect-resource-namespace=default", "-leader-elect-resource-name=x"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "r1", cfg.election.Identity)
	assert.Equal(t, 4*time.Second, cfg.election.LeaseDuration)
	assert.Equal(t, "x", cfg.election.Name)
	assert.Empty(t, cfg.namespace, "a deployment watches every namespace")

	for _, bad := range [][]string{
		{"-leader-elect"},   // in-process
		{"-scenario=false"}, // in-process
		{"-kubeconfig=/dev/null", "-leader-elect-renew-deadline=20s"},
	} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}

	var help bytes.Buffer
	_, err = parseFlags([]string{"-h"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-leader-elect\n", "-leader-elect-lease-duration", "-leader-elect-renew-deadline",
		"-leader-elect-retry-period", "-leader-elect-resource-namespace", "-leader-elect-resource-name", "-leader-elect-identity", "-scenario"} {
		assert.Contains(t, help.String(), f)
	}
}

// The not-converged message prints counts, never pointers.
func TestDescribePrintsNoPointers(t *testing.T) {
	three := int32(3)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"}}
	rs.Status.TerminatingReplicas = &three
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	require.NoError(t, indexer.Add(rs))
	d := &driver{cfg: config{namespace: "default", name: "demo"}, rsLister: appslisters.NewReplicaSetLister(indexer),
		podLister: corelisters.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))}
	got := d.describe()
	assert.Contains(t, got, "terminating 3")
	assert.NotContains(t, got, "0x")
}
