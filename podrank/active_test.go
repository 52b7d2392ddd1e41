package podrank_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

func TestIsActiveIsTerminating(t *testing.T) {
	cases := []struct {
		name                string
		pod                 *corev1.Pod
		active, terminating bool
	}{
		{"R-5.1 running is active", pt.New("a"), true, false},
		{"R-5.1 empty phase is active", pt.New("a", pt.Phase("")), true, false},
		{"R-5.1 pending is active", pt.New("a", pt.Phase(corev1.PodPending)), true, false},
		{"R-5.1 unknown is active", pt.New("a", pt.Phase(corev1.PodUnknown)), true, false},
		{"R-5.1 succeeded is not active", pt.New("a", pt.Phase(corev1.PodSucceeded)), false, false},
		{"R-5.1 failed is not active", pt.New("a", pt.Phase(corev1.PodFailed)), false, false},
		{"R-5.1/R-5.2 deleting running pod is terminating, not active", pt.New("a", pt.Deleting(t0)), false, true},
		{"R-5.2 deleting pending pod is terminating", pt.New("a", pt.Phase(corev1.PodPending), pt.Deleting(t0)), false, true},
		{"R-5.2 deleting succeeded pod is neither", pt.New("a", pt.Phase(corev1.PodSucceeded), pt.Deleting(t0)), false, false},
		{"R-5.2 deleting failed pod is neither", pt.New("a", pt.Phase(corev1.PodFailed), pt.Deleting(t0)), false, false},
		{"nil pod is neither", nil, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.active, podrank.IsActive(c.pod))
			assert.Equal(t, c.terminating, podrank.IsTerminating(c.pod))
		})
	}
}

func TestFilters(t *testing.T) {
	run := pt.New("run")
	pend := pt.New("pend", pt.Phase(corev1.PodPending))
	done := pt.New("done", pt.Phase(corev1.PodSucceeded))
	gone := pt.New("gone", pt.Deleting(t0))
	goneDone := pt.New("goneDone", pt.Phase(corev1.PodFailed), pt.Deleting(t0))
	gone2 := pt.New("gone2", pt.Phase(corev1.PodUnknown), pt.Deleting(t0))

	cases := []struct {
		name              string
		in                []*corev1.Pod
		active, terminate []*corev1.Pod
	}{
		{"R-5.3 keeps input order", []*corev1.Pod{gone2, pend, done, run, gone, goneDone}, []*corev1.Pod{pend, run}, []*corev1.Pod{gone2, gone}},
		{"R-5.3 nil when nothing matches", []*corev1.Pod{done, goneDone}, nil, nil},
		{"R-5.3 nil input gives nil", nil, nil, nil},
		{"R-5.3 empty input gives nil", []*corev1.Pod{}, nil, nil},
		{"nil entries are skipped", []*corev1.Pod{nil, run, nil, gone, nil}, []*corev1.Pod{run}, []*corev1.Pod{gone}},
		{"only nil entries give nil", []*corev1.Pod{nil, nil}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.in)
			active, terminating := podrank.FilterActive(c.in), podrank.FilterTerminating(c.in)
			assert.Equal(t, c.active, active)
			assert.Equal(t, c.terminate, terminating)
			if c.active == nil {
				assert.Nil(t, active)
			}
			if c.terminate == nil {
				assert.Nil(t, terminating)
			}
			assert.Equal(t, before, c.in, "input slice unchanged")
		})
	}
	t.Run("the result does not alias the input", func(t *testing.T) {
		in := []*corev1.Pod{run, pend}
		out := podrank.FilterActive(in)
		out[0] = nil
		assert.Same(t, run, in[0])
	})
}

// every pod, whatever its phase and deletion timestamp, is at
// most one of active and terminating; it is one of them exactly when it is
// not terminal.
func TestActiveTerminatingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		phases := []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, "Bogus"}
		phase := rapid.SampledFrom(phases).Draw(t, "phase")
		opts := []pt.Option{pt.Phase(phase)}
		if rapid.Bool().Draw(t, "deleting") {
			opts = append(opts, pt.Deleting(t0))
		}
		p := pt.New("p", opts...)
		active, terminating := podrank.IsActive(p), podrank.IsTerminating(p)
		if active && terminating {
			t.Fatal("a pod cannot be both active and terminating")
		}
		terminal := phase == corev1.PodSucceeded || phase == corev1.PodFailed
		if (active || terminating) == terminal {
			t.Fatalf("phase %q: active %v, terminating %v", phase, active, terminating)
		}
	})
}
