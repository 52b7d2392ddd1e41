package controlplane

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procState is the state letter of /proc/pid/stat (R, S, T for stopped, …).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// A paused process (SIGSTOP) is resumed before it is stopped: it ends by
// the SIGTERM of Stop, not by the SIGKILL after the grace period, which a
// stopped process would otherwise sit out.
func TestSignalStopAndStopResumes(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	cp := &ControlPlane{dir: t.TempDir(), logw: io.Discard, opts: Options{StopTimeout: time.Hour}}
	_, err = cp.StartProcess("sleeper", sleep, "600")
	require.NoError(t, err)
	p := cp.proc("sleeper")
	t.Cleanup(func() { p.kill() })
	require.True(t, cp.Running("sleeper"))
	require.NoError(t, cp.Signal("sleeper", syscall.SIGSTOP))
	require.Eventually(t, func() bool { return procState(t, p.cmd.Process.Pid) == "T" }, time.Minute, 10*time.Millisecond)
	assert.True(t, cp.Running("sleeper"), "a stopped process still runs")

	require.NoError(t, cp.Stop()) // StopTimeout is an hour: only SIGCONT lets SIGTERM end it now
	assert.False(t, cp.Running("sleeper"))
	var exit *exec.ExitError
	require.True(t, errors.As(p.err, &exit), "sleep ended by a signal: %v", p.err)
	ws := exit.Sys().(syscall.WaitStatus)
	assert.Equal(t, syscall.SIGTERM, ws.Signal())

	assert.ErrorContains(t, cp.Signal("sleeper", syscall.SIGCONT), "has exited")
	assert.ErrorContains(t, cp.Signal("other", syscall.SIGCONT), "was not started")
}
