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
