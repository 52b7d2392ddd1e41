package fakecluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
)

// The kubelet binds new pods across the nodes, makes them Running and
// Ready, and removes terminating pods.
func TestKubeletRunsPodsAndRemovesTerminatingOnes(t *testing.T) {
	c := fakecluster.New(1, fakecluster.Faults{})
	ctx, cancel := context.WithCancel(t.Context())
	k := fakecluster.NewKubelet(c.Clientset, fakecluster.KubeletOptions{Nodes: 2, ReadyDelay: 5 * time.Millisecond, TerminationDelay: 5 * time.Millisecond})
	var wg sync.WaitGroup
	wg.Go(func() { k.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	pods := c.Clientset.CoreV1().Pods(ns)
	for range 6 {
		_, err := pods.Create(t.Context(), pod("", "p-"), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	var list *corev1.PodList
	require.True(t, eventually(func() bool {
		var err error
		list, err = pods.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, p := range list.Items {
			if p.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	}), "every pod becomes Running")
	perNode := map[string]int{}
	for _, p := range list.Items {
		perNode[p.Spec.NodeName]++
		require.NotEmpty(t, p.Status.Conditions)
		ready := p.Status.Conditions[len(p.Status.Conditions)-1]
		assert.Equal(t, corev1.PodReady, ready.Type)
		assert.Equal(t, corev1.ConditionTrue, ready.Status)
	}
	assert.Equal(t, map[string]int{"node-1": 3, "node-2": 3}, perNode, "least-loaded scheduling")

	victim := list.Items[0].Name
	require.NoError(t, pods.Delete(t.Context(), victim, metav1.DeleteOptions{}))
	assert.True(t, eventually(func() bool {
		_, err := pods.Get(t.Context(), victim, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}), "the terminating pod is removed")
}

// eventually polls cond; the limit only bounds a hung test.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
