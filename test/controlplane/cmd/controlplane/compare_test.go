package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpread(t *testing.T) {
	assert.Equal(t, "3.0 s", spread([]float64{3, 3, 3}, "%.1f s"))
	assert.Equal(t, "2.0 s (1.0–9.0 s)", spread([]float64{9, 1, 2}, "%.1f s"), "median of odd count, range with the unit once")
	assert.Equal(t, "15 (10–20)", spread([]float64{20, 10}, "%.0f"), "median of even count")
}

func TestProcReadings(t *testing.T) {
	cpu0, err := procCPU(os.Getpid())
	require.NoError(t, err)
	// Spin until the reading moves (it counts 10 ms ticks), for at most 5 s.
	grew := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !grew; {
		x := 0
		for i := range 1_000_000 {
			x += i
		}
		_ = x
		cpu1, err := procCPU(os.Getpid())
		require.NoError(t, err)
		grew = cpu1 > cpu0
	}
	assert.True(t, grew, "the CPU time read from /proc/self/stat grows while the test spins")
	rss, err := procPeakRSS(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, rss, "a running test has a resident set")

	_, err = procCPU(-1)
	assert.Error(t, err, "no such process")
}

func TestProfilePath(t *testing.T) {
	got := profilePath("/p", "cpu", "reconcilekit, defaults, run 1")
	if want := "/p/reconcilekit-defaults-run-1.cpu.pprof"; got != want {
		t.Errorf("profilePath = %q, want %q", got, want)
	}
}

func TestPprofArgs(t *testing.T) {
	for i, want := range map[int]string{
		0: "--secure-port=4242 --profiling=true",
		2: "-pprof-address=127.0.0.1:4242",
		4: "",
	} {
		args, ok := pprofArgs(compareConfig{}, contenders[i], 4242)
		if got := strings.Join(args, " "); got != want || ok != (want != "") {
			t.Errorf("contender %d: pprofArgs = %q, %t; want %q", i, got, ok, want)
		}
	}
	withFlag := compareConfig{podSetFlags: map[string]bool{"pprof-bind-address": true}}
	args, ok := pprofArgs(withFlag, contenders[4], 4242)
	if !ok || strings.Join(args, " ") != "-pprof-bind-address=127.0.0.1:4242" {
		t.Errorf("PodSet with the flag: %q, %t", args, ok)
	}
}

func TestProfileCPUPhase(t *testing.T) {
	fleet := workload{owners: 3, pods: 2, final: 1, disrupt: 1}.phases()
	single := workload{owners: 1, pods: 2, final: 1, disrupt: 1}.phases()
	for _, tc := range []struct {
		phase   string
		phases  []phase
		scaleUp int
		want    int
	}{
		{"scale-up", fleet, 1, 1},
		{"replace", fleet, 1, 2},
		{"scale-up", single, 0, 0},
		{"replace", single, 0, 1},
		{"replace", single[:1], 0, -1},
	} {
		got := profiling{phase: tc.phase}.cpuPhase(tc.phases, tc.scaleUp)
		if got != tc.want {
			t.Errorf("-profile-phase %s over %d phases: cpuPhase = %d, want %d", tc.phase, len(tc.phases), got, tc.want)
		}
	}
}
