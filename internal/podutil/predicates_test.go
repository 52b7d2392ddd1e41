package podutil_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/internal/podutil"
)

var t0 = podtest.Epoch

func TestReadyAndAvailable(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := []struct {
		name      string
		pod       *corev1.Pod
		minReady  int32
		ready     bool
		readyTime time.Time
		available bool
	}{
		{"R-5.4 no condition", podtest.New("a"), 0, false, time.Time{}, false},
		{"R-5.4 first Ready wins over later True", podtest.New("a", podtest.NotReady(), podtest.Ready(t0)), 0, false, time.Time{}, false},
		{"R-5.4 first Ready True wins over later False", podtest.New("a", podtest.Ready(t0), podtest.NotReady()), 0, true, t0, true},
		{"R-5.5 minReady 0 without LTT is available", podtest.New("a", podtest.Ready(time.Time{})), 0, true, time.Time{}, true},
		{"R-5.5 minReady>0 without LTT is not available", podtest.New("a", podtest.Ready(time.Time{})), 1, true, time.Time{}, false},
		{"R-5.5 one ns before minReady is not available", podtest.New("a", podtest.Ready(now.Add(-10*time.Second+1))), 10, true, now.Add(-10*time.Second + 1), false},
		{"R-5.5 exactly minReady is available (v1.37 compares <=)", podtest.New("a", podtest.Ready(now.Add(-10*time.Second))), 10, true, now.Add(-10 * time.Second), true},
		{"R-5.5 one ns past minReady is available", podtest.New("a", podtest.Ready(now.Add(-10*time.Second-1))), 10, true, now.Add(-10*time.Second - 1), true},
		{"R-5.5 negative minReady compares arithmetically", podtest.New("a", podtest.Ready(now.Add(5*time.Second))), -10, true, now.Add(5 * time.Second), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.ready, podutil.IsReady(c.pod))
			assert.True(t, c.readyTime.Equal(podutil.ReadyTime(c.pod)))
			assert.Equal(t, c.available, podutil.IsAvailable(c.pod, c.minReady, now))
		})
	}
}

func TestMaxRestarts(t *testing.T) {
	// only native sidecars count among init containers.
	p := podtest.New("a", podtest.Restarts(2), podtest.Restarts(5),
		podtest.InitRestarts("init", false, 9), podtest.InitRestarts("side", true, 3))
	r, s := podutil.MaxRestarts(p)
	assert.Equal(t, int32(5), r)
	assert.Equal(t, int32(3), s)
	p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: "undeclared", RestartCount: 50})
	_, s = podutil.MaxRestarts(p)
	assert.Equal(t, int32(3), s, "a status with no spec entry is not a sidecar")
	r, s = podutil.MaxRestarts(nil)
	assert.Zero(t, r+s)
}

func TestHasLabels(t *testing.T) {
	has := func(labels, want map[string]string) bool {
		return podutil.HasLabels(labels, podutil.AppendLabels(nil, want))
	}
	assert.True(t, has(nil, nil), "R-8.2 empty template labels match everything")
	assert.True(t, has(map[string]string{"a": "1"}, map[string]string{}))
	assert.True(t, has(map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}))
	assert.True(t, has(map[string]string{"a": "1", "b": "2"}, map[string]string{"b": "2", "a": "1"}))
	assert.False(t, has(map[string]string{"a": "2"}, map[string]string{"a": "1"}))
	assert.False(t, has(map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}), "fewer labels than the template")
	assert.False(t, has(map[string]string{"a": "1", "c": "2"}, map[string]string{"a": "1", "b": "2"}))
	assert.False(t, has(nil, map[string]string{"a": ""}))
	assert.True(t, has(map[string]string{"a": ""}, map[string]string{"a": ""}))
}

// HasLabels over AppendLabels agrees with the plain definition: every
// key/value of want is in labels.
func TestHasLabelsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kv := rapid.MapOf(rapid.SampledFrom([]string{"", "a", "b", "c"}), rapid.SampledFrom([]string{"", "1", "2"}))
		labels, want := kv.Draw(t, "labels"), kv.Draw(t, "want")
		expect := true
		for k, v := range want {
			if got, ok := labels[k]; !ok || got != v {
				expect = false
			}
		}
		var buf [2]podutil.Label
		if got := podutil.HasLabels(labels, podutil.AppendLabels(buf[:0], want)); got != expect {
			t.Fatalf("HasLabels(%v, %v) = %v, want %v", labels, want, got, expect)
		}
	})
}

// Active and terminating are disjoint, and available implies ready.
func TestPredicateProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		phases := []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, "Bogus"}
		opts := []podtest.Option{podtest.Phase(rapid.SampledFrom(phases).Draw(t, "phase"))}
		if rapid.Bool().Draw(t, "deleting") {
			opts = append(opts, podtest.Deleting(t0))
		}
		if rapid.Bool().Draw(t, "ready") {
			opts = append(opts, podtest.Ready(t0.Add(time.Duration(rapid.Int64Range(-1e12, 1e12).Draw(t, "ltt")))))
		}
		p := podtest.New("p", opts...)
		minReady := rapid.Int32Range(-5, 100).Draw(t, "minReady")
		if podutil.IsAvailable(p, minReady, t0) && !podutil.IsReady(p) {
			t.Fatal("available implies ready")
		}
	})
}
