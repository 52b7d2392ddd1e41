package controlplane

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one started component: its command line, log file and, while
// it runs, the child process. Its methods are called with ControlPlane.mu held.
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	cmd      *exec.Cmd
	done     chan struct{} // closed after cmd.Wait returned
	err      error         // cmd.Wait's result, valid once done is closed
	logStart int64         // the log's size when this run started
}

// start launches the process with stdout and stderr appended to its log
// file. The child gets its own process group (a terminal's SIGINT reaches only
// the launcher, which stops the components in order) and SIGKILL when the
// launcher dies (Pdeathsig), so a crashed test leaves nothing running.
func (p *process) start() error {
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("controlplane: %s: %w", p.name, err)
	}
	defer f.Close() // the child holds its own copy
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("controlplane: %s: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("controlplane: starting %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.done = make(chan struct{})
	p.err = nil
	p.logStart = fi.Size()
	done := p.done
	go func() {
		p.err = cmd.Wait()
		close(done)
	}()
	return nil
}

// running reports whether the process was started and has not exited.
func (p *process) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// exited returns a non-nil error once the process has exited.
func (p *process) exited() error {
	if p.cmd == nil {
		return fmt.Errorf("controlplane: %s is not running", p.name)
	}
	select {
	case <-p.done:
		if p.err == nil {
			return fmt.Errorf("controlplane: %s exited", p.name)
		}
		return fmt.Errorf("controlplane: %s exited: %w", p.name, p.err)
	default:
		return nil
	}
}

// stop sends SIGCONT (a process stopped by SIGSTOP would otherwise sit on
// its SIGTERM for the whole grace period), then SIGTERM, waits up to grace
// for the process to exit, then sends SIGKILL and waits for it to be
// reaped. It is a no-op for a process that is not running.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// kill sends SIGCONT, then SIGKILL, and waits for the process to be
// reaped; a no-op for a process that is not running.
func (p *process) kill() {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Kill()
	<-p.done
}

// logSinceStart returns what the process's current run has written to its
// log, at most its first 4 MiB.
func (p *process) logSinceStart() []byte {
	f, err := os.Open(p.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(p.logStart, io.SeekStart); err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
	return b
}

// logTail returns the last lines of the process's log.
func (p *process) logTail(lines int) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	return tail(b, lines)
}

// errorWithLog wraps err with the tail of the process's log.
func (p *process) errorWithLog(err error) error {
	return fmt.Errorf("%w\n--- last lines of %s (%s) ---\n%s", err, p.name, p.logPath, p.logTail(25))
}

// pidAlive reports whether a process with this pid exists (signal 0).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
