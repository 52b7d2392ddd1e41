package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"50": 50, "50/s": 50, " 2.5/s ": 2.5, "120/m": 2, "0": 0, "0/s": 0} {
		got, err := parseRate(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "x", "-1", "5/h", "NaN", "Inf", "/s"} {
		_, err := parseRate(in)
		assert.Error(t, err, in)
	}
}

func TestUnrelatedFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cr := crowd{churn: 50}
	fs.Var(rateFlag{&cr.churn}, "unrelated-churn", "")
	require.NoError(t, fs.Parse([]string{"-unrelated-churn", "300/m"}))
	assert.Equal(t, 5.0, cr.churn)
	assert.Equal(t, "5/s", fs.Lookup("unrelated-churn").Value.String())
	assert.Error(t, fs.Parse([]string{"-unrelated-churn", "fast"}))

	ok := crowd{pods: 20000, failed: 0.25, churn: 50, timeout: time.Minute}
	assert.NoError(t, ok.validate())
	assert.NoError(t, crowd{}.validate(), "no unrelated pods: nothing to bound")
	for name, bad := range map[string]crowd{
		"negative":      {pods: -1, timeout: time.Minute},
		"too many":      {pods: maxUnrelated + 1, timeout: time.Minute},
		"share above 1": {pods: 10, failed: 1.5, timeout: time.Minute},
		"share NaN":     {pods: 10, failed: math.NaN(), timeout: time.Minute},
		"churn":         {pods: 10, churn: maxChurn + 1, timeout: time.Minute},
		"no timeout":    {pods: 10},
	} {
		assert.Error(t, bad.validate(), name)
	}
}

// The Failed share is exact and spread over the names.
func TestUnrelatedFailedShare(t *testing.T) {
	for _, tc := range []struct {
		pods   int
		failed float64
		want   int
	}{{20000, 0.25, 5000}, {50, 0.25, 13}, {7, 0, 0}, {7, 1, 7}, {3, 0.5, 2}} {
		cr := crowd{pods: tc.pods, failed: tc.failed}
		n, firstHalf := 0, 0
		for i := range tc.pods {
			if cr.isFailed(i) {
				n++
				if i < tc.pods/2 {
					firstHalf++
				}
			}
		}
		assert.Equal(t, tc.want, n, "%+v", tc)
		assert.Equal(t, tc.want, cr.failedCount())
		assert.InDelta(t, tc.want/2, firstHalf, 1, "spread evenly: %+v", tc)
	}
}

func TestContenderIndex(t *testing.T) {
	keys := map[string]bool{}
	for i, k := range contenders {
		assert.False(t, keys[k.key], "unique key %q", k.key)
		keys[k.key] = true
		got, err := contenderIndex(k.key)
		require.NoError(t, err)
		assert.Equal(t, i, got)
	}
	got, err := contenderIndex(" 4")
	require.NoError(t, err)
	assert.Equal(t, 4, got, "an index, as before")
	for _, bad := range []string{"", "kcm2", "-1", "99"} {
		_, err := contenderIndex(bad)
		assert.Error(t, err, bad)
	}
	i, _ := contenderIndex("podset-lean")
	assert.Equal(t, podSetCR, contenders[i].program)
	assert.Contains(t, contenders[i].needs, "lean-pods", "a row waits for its program's flags")
}

func TestFormatVerbsByResource(t *testing.T) {
	got := formatVerbs([]map[string]int{
		{"watch pods": 2, "create pods": 10, "update podsets/status": 4, "create events": 1, "get": 3, "list pods": 1},
		{"watch pods": 2, "create pods": 12, "update podsets/status": 6, "get": 3},
		{"watch pods": 2, "create pods": 11, "update podsets/status": 5, "get": 3, "bind pods": 7},
	})
	assert.Equal(t, "create pods 11 · update podsets/status 5 · get 3 · watch pods 2", got,
		"medians over the runs, ordered by the verb's place, then by resource; medians of 0 left out")
	got = formatVerbs([]map[string]int{{"watch pods": 1, "create pods": 2, "create events": 3, "bind pods": 1, "get": 1}})
	assert.Equal(t, "create events 3 · create pods 2 · get 1 · watch pods 1 · bind pods 1", got, "a verb not in verbOrder comes last")
}

// populate on a fake clientset: every pod created with its status, the
// share Failed, owned by the ConfigMap, unmatched by any owner's selector;
// the churn patches their status.
func TestPopulateAndChurn(t *testing.T) {
	client := fake.NewClientset()
	ctx := context.Background()
	// The fake has no ServiceAccount controller.
	_, err := client.CoreV1().ServiceAccounts(unrelatedNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cr := crowd{pods: 50, failed: 0.25, timeout: time.Minute}
	var res crowdResult
	names, err := cr.populate(ctx, client, &res)
	require.NoError(t, err)
	assert.Len(t, names, 50)
	assert.Equal(t, 50, res.created)
	assert.Equal(t, 13, res.failed)
	pods, err := client.CoreV1().Pods(unrelatedNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 50)
	phases := map[corev1.PodPhase]int{}
	for _, p := range pods.Items {
		phases[p.Status.Phase]++
		require.Len(t, p.OwnerReferences, 1)
		assert.Equal(t, "ConfigMap", p.OwnerReferences[0].Kind)
		assert.NotContains(t, p.Labels, "app", "no owner's selector (app=<name>) matches")
		assert.Equal(t, unrelatedNode(0), p.Spec.NodeName)
	}
	assert.Equal(t, map[corev1.PodPhase]int{corev1.PodFailed: 13, corev1.PodRunning: 37}, phases)
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 1)
	assert.Equal(t, corev1.TaintEffectNoSchedule, nodes.Items[0].Spec.Taints[0].Effect)

	// The churn: at 2000/s for a moment, some updates sent, then stopped.
	ch := startChurn(ctx, client, names, maxChurn)
	require.NoError(t, poll(ctx, time.Minute, "a churn update", func() bool { return ch.sent.Load() >= 5 }))
	ch.Stop()
	ch.Stop()
	sent := ch.sent.Load()
	assert.Zero(t, ch.failed.Load())
	p, err := client.CoreV1().Pods(unrelatedNamespace).Get(ctx, names[0], metav1.GetOptions{})
	require.NoError(t, err)
	found := false
	for _, c := range p.Status.Conditions {
		found = found || c.Type == churnCondition
	}
	assert.True(t, found, "the first pod's status has the churn's condition")
	assert.Equal(t, sent, ch.sent.Load(), "nothing is sent after Stop")

	none := startChurn(ctx, client, names, 0)
	none.Stop()
	assert.Zero(t, none.sent.Load(), "rate 0: no churn")
	_, err = crowd{}.populate(ctx, client, &res)
	assert.NoError(t, err, "no unrelated pods: nothing done")
}

// On a real control plane (kwok, kube-scheduler and kube-controller-manager
// with its garbage collector and pod GC running): the unrelated pods are
// created with their statuses and churned, and no one but the driver (the
// admin) writes to them — not kwok, whose nodes they are not on, nor
// kube-scheduler (no binding), nor a controller.
func TestUnrelatedPodsOnAControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Nodes: 1, AuditWrites: true, Log: io.Discard})
	if errors.Is(err, controlplane.ErrUnavailable) && os.Getenv("CI") == "" {
		t.Skipf("control plane binaries cannot be built here (no network?); run make controlplane: %v", err)
	}
	require.NoError(t, err)
	defer func() { assert.NoError(t, cp.Stop()) }()
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = driverQPS, driverQPS
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	cr := crowd{pods: 50, failed: 0.25, timeout: 2 * time.Minute}
	var res crowdResult
	names, err := cr.populate(ctx, client, &res)
	require.NoError(t, err)
	assert.Equal(t, crowdResult{created: 50, failed: 13, took: res.took}, res)
	ch := startChurn(ctx, client, names, 200)
	require.NoError(t, poll(ctx, time.Minute, "20 churn updates", func() bool { return ch.sent.Load() >= 20 }))
	ch.Stop()
	assert.Zero(t, ch.failed.Load())
	churned := int(ch.sent.Load())

	// Every write of the admin is in the audit log once it is counted:
	// the creates, the status writes and the churn's patches.
	var writes controlplane.WriteCounts
	require.NoError(t, poll(ctx, time.Minute, "the driver's writes in the audit log", func() bool {
		writes, err = cp.Writes()
		return err == nil && writes.Sum(controlplane.AdminUser, "patch", "pods", "status", 0) == churned
	}))
	assert.Equal(t, 50, writes.Sum(controlplane.AdminUser, "create", "pods", "", 201))
	assert.Equal(t, 50, writes.Sum(controlplane.AdminUser, "update", "pods", "status", 200))
	for w, n := range writes {
		if w.User != controlplane.AdminUser {
			t.Errorf("%d writes to the unrelated pods by another user: %+v", n, w)
		}
	}
	pods, err := client.CoreV1().Pods(unrelatedNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	phases := map[corev1.PodPhase]int{}
	for _, p := range pods.Items {
		phases[p.Status.Phase]++
	}
	assert.Equal(t, map[corev1.PodPhase]int{corev1.PodFailed: 13, corev1.PodRunning: 37}, phases)
}

func TestControllerManagerArgs(t *testing.T) {
	assert.Equal(t, []string{"--node-monitor-grace-period=1h"}, crowd{}.controllerManagerArgs(), "without -unrelated: as before")
	assert.Equal(t, []string{"--node-monitor-grace-period=24h", "--terminated-pod-gc-threshold=12500"},
		crowd{pods: 20000, failed: 0.25}.controllerManagerArgs())
	assert.Equal(t, []string{"--node-monitor-grace-period=24h", "--terminated-pod-gc-threshold=15001"},
		crowd{pods: 20000, failed: 0.75}.controllerManagerArgs(), "every Failed pod kept")
}
